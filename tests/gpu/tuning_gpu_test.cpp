// The tuner end to end on the present device: a small tune with a variant planted to fault
// completes, records the fault, measures the other variants (times, reference check, counters or
// counters recorded as missing), picks an ok variant as best, and a re-run of a complete shape
// measures nothing. Also the worker client with the real worker, directly, and (sm_90a only) a
// small tune in which a wgmma variant planted to deadlock on an mbarrier is recorded as a timeout.
#include <gtest/gtest.h>

#include <algorithm>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "db/results_database.hpp"
#include "driver/device_context.hpp"
#include "generator/kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "run_swr_tune.hpp"
#include "swr/instruction_path.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/tuning_session.hpp"
#include "tuner/tuning/worker_client.hpp"
#include "tuner/tuning_request.hpp"

namespace swr::test {
namespace {

const AttentionProblem kProblem{2, 2, 1024, 1024, 64, DataType::f16, false};

class TuningOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SWR_REQUIRE_GPU();
    present_ = *detect_present_gpu();
  }
  std::vector<std::string> tune_arguments(std::vector<std::string> extra) const {
    std::vector<std::string> arguments = {"--gpu",       "auto",
                                          "--seq",       "1024",
                                          "--batch",     "2",
                                          "--heads",     "2",
                                          "--db",        database_.string(),
                                          "--cache-dir", (scratch_.path() / "cubins").string()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return arguments;
  }
  std::vector<db::StoredMeasurement> stored() const {
    const db::ResultsDatabase database(database_, db::OpenMode::read_only);
    const std::vector<db::StoredGpu> gpus = database.gpus_named(present_.name);
    const auto problem = database.find_problem(kProblem);
    if (gpus.size() != 1 || !problem) return {};
    return database.measurements_for(gpus.front().id, *problem);
  }

  GpuProfile present_;
  TemporaryDirectory scratch_;
  std::filesystem::path database_ = scratch_.path() / "results.db";
  std::map<std::string, std::string> environment_ = {
      {"XDG_CACHE_HOME", (scratch_.path() / "xdg").string()}};
};

TEST_F(TuningOnGpu, SmallTuneIsolatesThePlantedFaultAndMeasuresTheRest) {
  const ProcessResult result =
      run_swr_tune(tune_arguments({"--limit", "6", "--plant-fault"}), environment_);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("best cyclic vs best sawtooth"), std::string::npos) << result.out;

  const std::vector<db::StoredMeasurement> measurements = stored();
  ASSERT_EQ(measurements.size(), 6u) << result.out << result.err;
  int faults = 0;
  for (const db::StoredMeasurement& measurement : measurements) {
    const db::MeasurementRecord& record = measurement.record;
    const bool planted = measurement.config_key.ends_with("-fault");
    if (planted) {
      ++faults;
      EXPECT_EQ(record.status, db::MeasurementStatus::fault) << record.error;
      EXPECT_FALSE(record.error.empty());
      continue;
    }
    ASSERT_EQ(record.status, db::MeasurementStatus::ok)
        << measurement.config_key << ": " << record.error;
    ASSERT_TRUE(record.median_ms && record.p95_ms && record.min_ms && record.timed_runs);
    EXPECT_GT(*record.min_ms, 0);
    EXPECT_LE(*record.min_ms, *record.median_ms);
    EXPECT_LE(*record.median_ms, *record.p95_ms);
    EXPECT_GE(*record.timed_runs, 3);
    EXPECT_LE(*record.timed_runs, 20);
    ASSERT_TRUE(record.relative_error.has_value());
    EXPECT_LT(*record.relative_error, 2e-3);
    EXPECT_GT(record.tflops.value_or(0), 0);
    EXPECT_GT(record.registers.value_or(0), 0);
    EXPECT_GE(record.blocks_per_sm.value_or(0), 1);
    EXPECT_EQ(record.method.at("l2_state"), "flushed: read 2x L2 before every run");
    EXPECT_EQ(record.method.at("reference"), "GPU, sampled rows + all elements finite");
    const std::string counters = record.method.at("counters").get<std::string>();
    if (counters.rfind("unavailable: ", 0) == 0) {
      EXPECT_FALSE(record.l2_sector_misses.has_value());  // recorded as missing
    } else {
      EXPECT_EQ(counters, "CUPTI range profiler, user replay, L2 flushed each pass");
      ASSERT_TRUE(record.l2_sector_misses && record.l2_sectors_from_tex && record.l2_hit_rate);
      EXPECT_GT(*record.l2_sectors_from_tex, 0);
      EXPECT_GE(*record.l2_hit_rate, 0);
      EXPECT_LE(*record.l2_hit_rate, 1);
      // Q, K, V come from DRAM at least once after the flush: 3 x 512 KiB.
      EXPECT_GE(record.dram_read_bytes.value_or(0), 0.9 * 3 * 512 * 1024);
      EXPECT_TRUE(record.observed_intensity.has_value());
    }
  }
  EXPECT_EQ(faults, 1);

  const db::ResultsDatabase database(database_, db::OpenMode::read_only);
  const auto best = database.best_for(database.gpus_named(present_.name).front().id,
                                      *database.find_problem(kProblem));
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->record.status, db::MeasurementStatus::ok);
  EXPECT_FALSE(best->config_key.ends_with("-fault"));

  const ProcessResult shown = run_swr_tune({"show", "--db", database_.string(), "--seq", "1024",
                                            "--batch", "2", "--heads", "2", "--json"},
                                           environment_);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(nlohmann::json::parse(shown.out).at("results")[0].at("variants").size(), 6u);
}

TEST_F(TuningOnGpu, RerunOfACompleteShapeMeasuresNothingAndTakesUnderFiveSeconds) {
  const std::vector<std::string> two = {"--config", "m64n64w4s1-cyclic-static-head_major",
                                        "--config", "m64n64w4s1-sawtooth-static-head_major"};
  const ProcessResult first = run_swr_tune(tune_arguments(two), environment_);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  ASSERT_EQ(stored().size(), 2u);
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult again = run_swr_tune(tune_arguments(two), environment_);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("everything is measured"), std::string::npos) << again.out;
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(stored().size(), 2u);
}

// A grouped-query prefill shape (32 query heads over 8 K/V heads, head dim 128, bottom-right mask
// with S_q < S_kv) tuned end to end: every variant checked against the GPU reference, stored under
// its own key, and answered exactly by query.
TEST_F(TuningOnGpu, SmallTuneOfAGroupedQueryBottomRightShape) {
  const std::vector<std::string> shape = {
      "--seq",      "777",     "--seq-kv", "2048",           "--batch",
      "1",          "--heads", "32",       "--kv-heads",     "8",
      "--head-dim", "128",     "--causal", "--causal-align", "bottom_right"};
  std::vector<std::string> arguments = {"--gpu",       "auto",
                                        "--limit",     "4",
                                        "--db",        database_.string(),
                                        "--cache-dir", (scratch_.path() / "cubins").string()};
  arguments.insert(arguments.end(), shape.begin(), shape.end());
  const ProcessResult result = run_swr_tune(arguments, environment_);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;

  AttentionProblem problem{1, 32, 777, 2048, 128, DataType::f16, true};
  problem.kv_heads = 8;
  problem.causal_align = CausalAlignment::bottom_right;
  const db::ResultsDatabase database(database_, db::OpenMode::read_only);
  const auto id = database.find_problem(problem);
  ASSERT_TRUE(id) << result.out;
  const std::vector<db::StoredMeasurement> measurements =
      database.measurements_for(database.gpus_named(present_.name).front().id, *id);
  ASSERT_EQ(measurements.size(), 4u);
  for (const db::StoredMeasurement& measurement : measurements) {
    EXPECT_EQ(measurement.record.status, db::MeasurementStatus::ok)
        << measurement.config_key << ": " << measurement.record.error;
    EXPECT_LT(measurement.record.relative_error.value_or(1), 2e-3) << measurement.config_key;
  }
  std::vector<std::string> query = {"query", "--gpu", "auto", "--db", database_.string(), "--json"};
  query.insert(query.end(), shape.begin(), shape.end());
  const ProcessResult answered = run_swr_tune(query, environment_);
  ASSERT_EQ(answered.exit_code, 0) << answered.err;
  const nlohmann::json answer = nlohmann::json::parse(answered.out);
  EXPECT_EQ(answer.at("match"), "exact");
  EXPECT_EQ(answer.at("tuned_shape"), "b1_h32_kv8_sq777_skv2048_d128_f16_causal_br");
}

// The real worker process: a good variant is measured, the planted fault kills only its worker.
TEST_F(TuningOnGpu, WorkerClientSurvivesAFaultingVariant) {
  const NvrtcCompiler compiler;
  auto compiled = [&](bool planted) {
    AttentionConfig config = *AttentionConfig::from_key("m64n64w4s1-sawtooth-static-head_major");
    config.planted_fault = planted;
    const KernelSource source = render_attention_kernel(kProblem, config);
    const CompiledKernel kernel = compiler.compile(source, present_.arch);
    EXPECT_TRUE(kernel.ok) << kernel.log;
    return VariantJob{kProblem, config, kernel.cubin, source.dynamic_shared_bytes, present_, 42};
  };
  WorkerClient client({swr_tune_path(), kMeasureWorkerSubcommand});
  const VariantOutcome good = client.measure(compiled(false));
  EXPECT_EQ(good.status, db::MeasurementStatus::ok) << good.error;
  const VariantOutcome fault = client.measure(compiled(true));
  EXPECT_EQ(fault.status, db::MeasurementStatus::fault) << fault.error;
  const VariantOutcome after = client.measure(compiled(false));
  EXPECT_EQ(after.status, db::MeasurementStatus::ok) << after.error;
  EXPECT_EQ(client.workers_started(), 2);
}

// The planted hang (AttentionConfig::planted_hang, test-only, never enumerated): the producer of a
// dynamic-persistence wgmma kernel issues nothing, its consumers wait forever on the tile queue's
// mbarrier. The session goes through the real worker: the hang must cost one worker and the time
// limit, be recorded as a timeout, and leave the variants after it measured.
TEST_F(TuningOnGpu, SmallTuneRecordsAnMbarrierHangAsATimeoutAndMeasuresTheRest) {
  if (std::string why = instruction_path_problem(present_, InstructionPath::wgmma); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const AttentionConfig grid =
      *AttentionConfig::from_key("wgmma-m128n128s2-ov-pp-cyclic-grid-head_major");
  const AttentionConfig dynamic =
      *AttentionConfig::from_key("wgmma-m128n128s2-ov-pp-cyclic-dynamic-head_major");
  AttentionConfig hang = dynamic;
  hang.planted_hang = true;
  ASSERT_EQ(hang.key(), dynamic.key() + "-hang");

  TuningRequest request;
  request.database = database_;
  CompileSettings compile;
  compile.cache_dir = scratch_.path() / "cubins";
  TuningPlan plan{tuning_settings(present_, request, compile), {}};
  plan.shapes.push_back({kProblem, {hang, grid, dynamic}});
  // A short limit (the hang costs all of it); a good variant here measures in well under 1 s.
  WorkerTimeouts timeouts;
  timeouts.minimum_variant_seconds = 10;
  timeouts.expected_time_multiple = 4;
  const double limit = variant_timeout_seconds(kProblem, present_, timeouts);
  char limit_text[48];
  std::snprintf(limit_text, sizeof(limit_text), "no result within %.0f s", limit);
  InterruptFlag interrupt;
  WorkerClient worker({swr_tune_path(), kMeasureWorkerSubcommand}, timeouts, &interrupt);
  const auto start = std::chrono::steady_clock::now();
  const TuningSummary summary = TuningSession(std::move(plan), worker, interrupt).run();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(summary.recorded, 3);
  EXPECT_EQ(summary.failed, 1);
  EXPECT_FALSE(summary.interrupted);
  EXPECT_GE(seconds, limit);

  const std::vector<db::StoredMeasurement> measurements = stored();
  ASSERT_EQ(measurements.size(), 3u);
  // The hung one was killed; a new worker measured what came after it, if anything did.
  const bool hang_came_last =
      std::max_element(measurements.begin(), measurements.end(), [](const auto& a, const auto& b) {
        return a.id < b.id;
      })->config_key == hang.key();
  EXPECT_EQ(worker.workers_started(), hang_came_last ? 1 : 2);
  for (const db::StoredMeasurement& measurement : measurements) {
    const db::MeasurementRecord& record = measurement.record;
    if (measurement.config_key == hang.key()) {
      EXPECT_EQ(record.status, db::MeasurementStatus::timeout) << record.error;
      // Batched (the default), the limit is the batch's: the sum of its variants' limits.
      EXPECT_TRUE(record.error.find(limit_text) != std::string::npos ||
                  record.error.find("no result of the batch within") != std::string::npos)
          << record.error;
      EXPECT_FALSE(record.median_ms.has_value());
      continue;
    }
    EXPECT_TRUE(measurement.config_key == grid.key() || measurement.config_key == dynamic.key())
        << measurement.config_key;
    EXPECT_EQ(record.status, db::MeasurementStatus::ok)
        << measurement.config_key << ": " << record.error;
    EXPECT_LT(record.relative_error.value_or(1), 2e-3) << measurement.config_key;
    EXPECT_GT(record.median_ms.value_or(0), 0) << measurement.config_key;
  }
  std::printf("planted hang: %.1f s for the 3 variants, workers started %d\n", seconds,
              worker.workers_started());
}

}  // namespace
}  // namespace swr::test
