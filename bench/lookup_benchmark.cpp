// How long the runtime takes to answer "which kernel for this shape": from memory after the first
// lookup (target: under 1 us median), and from SQLite the first time (target: under 200 us median)
// on a database of 10,000 measurements on one GPU: 49 shapes with 200 variants measured once, and
// one shape whose 100 variants were all measured twice (a re-tune, or two machines merged).
//   build/bench/swr_lookup_benchmark
// Each benchmark also reports median_us, the median of single lookups (warm: of batches of 1000).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "db/results_database.hpp"
#include "support/files.hpp"
#include "swr/tuned_catalog.hpp"

namespace {

constexpr int kShapes = 50;
constexpr int kConfigsPerShape = 200;
constexpr int kRepeatedShape = kShapes - 1;  // 100 variants x 2 runs

swr::AttentionConfig numbered_config(int index) {
  swr::AttentionConfig config;
  config.block_m = index % 2 == 0 ? 64 : 128;
  index /= 2;
  config.block_n = 32 << (index % 3);
  index /= 3;
  config.warps = index % 2 == 0 ? 4 : 8;
  index /= 2;
  config.stages = 1 + index % 3;
  index /= 3;
  config.order = index % 2 == 0 ? swr::KvOrder::cyclic : swr::KvOrder::sawtooth;
  index /= 2;
  config.persistence = static_cast<swr::Persistence>(index % 3);
  return config;
}

// Shape i: head dim, mask and sequence length vary, so that nearest lookups have ~12 candidates.
swr::AttentionProblem numbered_shape(int index) {
  swr::AttentionProblem problem;
  problem.batch = 8;
  problem.heads = 1 + index % 3;
  problem.head_dim = index % 2 == 0 ? 64 : 128;
  problem.causal = (index / 2) % 2 == 1;
  problem.seq_q = problem.seq_kv = 1024 * (1 + index / 4);
  return problem;
}

class LookupDatabase {
 public:
  LookupDatabase() {
    swr::db::GpuRecord gpu{"h200", "sm_90a", 132, 60LL << 20, "NVIDIA H200", "580.65", "13.0"};
    std::vector<swr::db::PortableMeasurement> measurements;
    for (int shape = 0; shape < kShapes; ++shape) {
      for (int slot = 0; slot < kConfigsPerShape; ++slot) {
        const bool repeated = shape == kRepeatedShape;
        const int variant = repeated ? slot / 2 : slot;
        const int run = repeated ? slot % 2 : 0;  // the second run is a day later, a bit slower
        swr::db::PortableMeasurement measurement;
        measurement.gpu = gpu;
        measurement.problem = numbered_shape(shape);
        measurement.config = numbered_config(variant);
        swr::db::MeasurementRecord& record = measurement.record;
        record.median_ms = 1.0 + ((variant * 37 + shape * 11) % 200) / 100.0 + run * 0.01;
        record.p95_ms = *record.median_ms * 1.02;
        record.timed_runs = 20;
        record.l2_hit_rate = 0.5;
        record.method = {{"l2", "flushed"}};
        record.source_hash = "bench-" + std::to_string(shape) + "-" + std::to_string(variant);
        record.toolkit_version = "13.0";
        record.driver_version = "580.65";
        char time[32];
        std::snprintf(time, sizeof(time), "2026-01-0%dT%02d:%02d:%02d.000Z", 1 + run,
                      shape / 10 % 24, variant / 60 % 60, variant % 60);
        record.measured_at = time;
        measurements.push_back(std::move(measurement));
      }
    }
    swr::db::ResultsDatabase database(path());
    if (database.import_measurements(measurements).added != 10'000) {
      throw std::logic_error("the benchmark database should hold 10,000 measurements");
    }
  }
  std::filesystem::path path() const { return directory_.path() / "results.db"; }

 private:
  swr::TemporaryDirectory directory_{"swr-lookup-"};
};

const LookupDatabase& lookup_database() {
  static const LookupDatabase database;
  return database;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

using Clock = std::chrono::steady_clock;

// 0: tuned shape 21 (exact); 1: an untuned length between tuned ones (nearest); 2: a dtype never
// tuned (none); 3: the shape measured twice (exact, through the history of every variant).
swr::AttentionProblem asked(int kind) {
  swr::AttentionProblem problem = numbered_shape(kind == 3 ? kRepeatedShape : 21);
  if (kind == 1) problem.seq_q = problem.seq_kv = problem.seq_q + 300;
  if (kind == 2) problem.dtype = swr::DataType::bf16;
  return problem;
}

void warm_lookup(benchmark::State& state) {
  const swr::TunedCatalog catalog = swr::TunedCatalog::open_database(lookup_database().path());
  const swr::AttentionProblem problem = asked(static_cast<int>(state.range(0)));
  catalog.best("h200", problem);  // the first lookup fills the memory
  constexpr int kBatch = 1000;
  std::vector<double> per_lookup_us;
  for (auto _ : state) {
    const auto start = Clock::now();
    for (int i = 0; i < kBatch; ++i) benchmark::DoNotOptimize(catalog.best("h200", problem));
    per_lookup_us.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kBatch);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["median_us"] = median(per_lookup_us);
}

void cold_lookup(benchmark::State& state) {
  const swr::TunedCatalog catalog = swr::TunedCatalog::open_database(lookup_database().path());
  const swr::AttentionProblem problem = asked(static_cast<int>(state.range(0)));
  catalog.best("h200", problem);  // SQLite's statements prepared and pages cached, as in use
  std::vector<double> per_lookup_us;
  for (auto _ : state) {
    state.PauseTiming();
    catalog.forget_answers();
    state.ResumeTiming();
    const auto start = Clock::now();
    benchmark::DoNotOptimize(catalog.best("h200", problem));
    per_lookup_us.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  state.counters["median_us"] = median(per_lookup_us);
}

}  // namespace

// Argument: what asked() asks.
BENCHMARK(warm_lookup)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(cold_lookup)->Arg(0)->Arg(1)->Arg(2)->Arg(3)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
