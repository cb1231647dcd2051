#include "tuner/tuning/gemm_tuning_session.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>

#include "generator/cubin_cache.hpp"
#include "generator/gemm_kernel_source.hpp"
#include "generator/parallel_compiler.hpp"
#include "tuner/text_format.hpp"
#include "tuner/tuning/device_pool.hpp"
#include "tuner/tuning/result_table.hpp"
#include "tuner/tuning/timing_statistics.hpp"
#include "tuner/tuning/tuning_run.hpp"

namespace swr {
namespace {

using Clock = std::chrono::steady_clock;

// "ok  1.234 ms  345.6 TFLOP/s  1.020x cuBLAS  L2 hit 56.0%", or the failure.
std::string outcome_text(const db::MeasurementRecord& record, const GemmBaseline& baseline) {
  if (record.status != db::MeasurementStatus::ok) return failed_outcome_text(record);
  char text[200];
  std::snprintf(text, sizeof(text), "ok  %s ms  %.1f TFLOP/s",
                format_milliseconds(record.median_ms).c_str(), record.tflops.value_or(0));
  std::string line = text;
  if (baseline.median_ms && record.median_ms) {
    std::snprintf(text, sizeof(text), "  %.3fx cuBLAS", *baseline.median_ms / *record.median_ms);
    line += text;
  }
  line += "  L2 hit " + format_hit_rate(record.l2_hit_rate);
  return line;
}

// cuBLAS on the problem, in this run: the baseline the variants are compared with.
GemmBaseline measure_baseline(GemmVariantMeasurer& measurer, const GemmProblem& problem,
                              const GpuProfile& gpu, std::uint64_t seed) {
  GemmVariantJob job;
  job.problem = problem;
  job.cublas = true;
  job.gpu = gpu;
  job.seed = seed;
  const VariantOutcome outcome = measurer.measure(job);
  GemmBaseline baseline;
  if (outcome.status == db::MeasurementStatus::ok && !outcome.times_ms.empty()) {
    baseline.median_ms = summarize_timings(outcome.times_ms).median_ms;
    baseline.version = outcome.method.value("baseline", std::string("cuBLAS"));
  } else {
    baseline.note = outcome.error.empty() ? "cuBLAS failed" : first_error_line(outcome.error);
  }
  return baseline;
}

// "cuBLAS on <problem>: 1.234 ms  345.6 TFLOP/s (<version>)", or why there is none.
std::string baseline_line(const GemmProblem& problem, const GemmBaseline& baseline) {
  std::string line = "cuBLAS on " + problem.key() + ": ";
  if (baseline.median_ms) {
    char text[120];
    std::snprintf(text, sizeof(text), "%.3f ms  %.1f TFLOP/s (%s)", *baseline.median_ms,
                  gemm_tflops(problem, *baseline.median_ms), baseline.version.c_str());
    line += text;
  } else {
    line += baseline.note + "; tuning goes on without the baseline";
  }
  return line;
}

// Per stored shape: its fastest variants against cuBLAS (this run's, else the stored one).
void print_tables(TuningRun& run, const GemmTuningPlan& plan, GemmTuningSummary& summary) {
  if (!run.gpu_id()) return;
  for (std::size_t shape = 0; shape < plan.shapes.size(); ++shape) {
    const std::optional<db::ProblemId>& problem_id = run.problem_id(shape);
    if (!problem_id) continue;
    const auto measurements = run.database().measurements_for(*run.gpu_id(), *problem_id);
    GemmBaseline& baseline = summary.baselines[shape];
    if (!baseline.median_ms && baseline.note.empty()) {
      // A shape that needed no measuring: the baseline its rows carry.
      baseline = stored_gemm_baseline(measurements);
      if (!baseline.median_ms) baseline.note = "not measured in this run";
    }
    print_gemm_table(std::cout, plan.shapes[shape].problem, plan.gpu, measurements, baseline,
                     plan.table_rows);
  }
  std::cout << std::flush;
}

// Every kernel binary the pending variants need, per shape: configs that differ in their swizzle
// share one, so all are compiled before the first measurement.
std::vector<std::map<std::string, GemmBinary>> compile_binaries(
    const GemmTuningPlan& plan, const std::vector<PendingVariant<GemmConfig>>& pending,
    const NvrtcCompiler& compiler) {
  const CubinCache cache(plan.cubin_cache);
  std::vector<std::map<std::string, GemmBinary>> binaries(plan.shapes.size());
  for (std::size_t shape = 0; shape < plan.shapes.size(); ++shape) {
    std::vector<GemmConfig> configs;
    for (const PendingVariant<GemmConfig>& variant : pending)
      if (variant.shape == shape) configs.push_back(variant.config);
    if (configs.empty()) continue;
    const Clock::time_point compile_start = Clock::now();
    binaries[shape] = compile_gemm_binaries(compiler, &cache, plan.shapes[shape].problem, configs,
                                            plan.gpu.arch, plan.compile_threads);
    int failed = 0;
    for (const auto& [name, binary] : binaries[shape]) failed += binary.kernel.ok ? 0 : 1;
    std::cout << "compiled " << binaries[shape].size() << " kernel binaries for "
              << plan.shapes[shape].problem.key() << " in "
              << format_duration(
                     std::chrono::duration<double>(Clock::now() - compile_start).count())
              << (failed ? " (" + std::to_string(failed) + " failed)" : std::string()) << "\n"
              << std::flush;
  }
  return binaries;
}

}  // namespace

GemmTuningSession::GemmTuningSession(GemmTuningPlan plan, GemmVariantMeasurer& measurer,
                                     const InterruptFlag& interrupt)
    : GemmTuningSession(std::move(plan), std::vector<GemmVariantMeasurer*>{&measurer}, interrupt) {}

GemmTuningSession::GemmTuningSession(GemmTuningPlan plan,
                                     std::vector<GemmVariantMeasurer*> measurers,
                                     const InterruptFlag& interrupt)
    : plan_(std::move(plan)), measurers_(std::move(measurers)), interrupt_(interrupt) {}

GemmTuningSession::~GemmTuningSession() = default;

int GemmTuningSession::find_missing() {
  if (!run_) {
    summary_.baselines.resize(plan_.shapes.size());
    run_ = std::make_unique<TuningRun>(plan_, interrupt_, summary_);
    pending_ = run_->find_missing(plan_.shapes, "gemm ");
  }
  return static_cast<int>(pending_.size());
}

GemmTuningSummary GemmTuningSession::run(ProgressDisplay* progress) {
  find_missing();
  TuningRun& run = *run_;
  const bool top_pass = plan_.counters == CountersPolicy::top;
  if (pending_.empty() && !top_pass) {
    print_tables(run, plan_, summary_);
    run.say_everything_measured();
    return summary_;
  }

  const NvrtcCompiler compiler;
  run.create_rows(plan_.shapes, pending_, compiler.version());
  // Each device's cuBLAS time per shape, measured there before its first variant of the shape;
  // row d is written and read by device d's thread only.
  DeviceBaselines baselines(measurers_.size(),
                            std::vector<std::optional<GemmBaseline>>(plan_.shapes.size()));
  run.start_progress(pending_, progress);
  run.measure_by_counters_policy(
      plan_.shapes, pending_,
      [&](std::vector<PendingVariant<GemmConfig>>& variants, bool collect_counters) {
        measure_pending(compiler, variants, collect_counters, baselines);
      });
  run.finish_progress();
  print_tables(run, plan_, summary_);
  run.say_closing();
  return summary_;
}

void GemmTuningSession::measure_pending(const NvrtcCompiler& compiler,
                                        std::vector<PendingVariant<GemmConfig>>& pending,
                                        bool collect_counters, DeviceBaselines& baselines) {
  TuningRun& run = *run_;
  const std::vector<std::map<std::string, GemmBinary>> binaries =
      compile_binaries(plan_, pending, compiler);
  const auto binary_of = [&](const PendingVariant<GemmConfig>& variant) -> const GemmBinary& {
    return binaries[variant.shape].at(
        gemm_binary_name(plan_.shapes[variant.shape].problem, variant.config));
  };

  const std::uint64_t seed = run.input_seed();
  const std::vector<std::string> device_names = measurer_names(plan_, measurers_.size());
  const bool several = measurers_.size() > 1;
  std::unique_ptr<DevicePool> pool;
  DevicePool::Work work;
  work.measure = [&](std::size_t device, std::size_t item) {
    const PendingVariant<GemmConfig>& variant = pending[item];
    const GemmTuningShape& shape = plan_.shapes[variant.shape];
    std::optional<GemmBaseline>& baseline = baselines[device][variant.shape];
    if (!baseline) {
      baseline = measure_baseline(*measurers_[device], shape.problem, plan_.gpu, seed);
      pool->locked([&] {
        GemmBaseline& shown = summary_.baselines[variant.shape];
        if (!shown.median_ms && shown.note.empty()) shown = *baseline;
        run.say(baseline_line(shape.problem, *baseline) +
                (several ? " (" + device_names[device] + ")" : ""));
      });
    }
    const GemmBinary& binary = binary_of(variant);
    GemmVariantJob job;
    job.problem = shape.problem;
    job.config = variant.config;
    job.cubin = binary.kernel.cubin;
    job.dynamic_shared_bytes = binary.source.dynamic_shared_bytes;
    job.gpu = plan_.gpu;
    job.seed = seed;
    job.collect_counters = collect_counters;
    return measurers_[device]->measure(job);
  };
  work.record = [&](std::size_t device, std::size_t item, const VariantOutcome& outcome) {
    if (!run.accept(outcome)) return false;
    const PendingVariant<GemmConfig>& variant = pending[item];
    const GemmTuningShape& shape = plan_.shapes[variant.shape];
    const GemmBinary& binary = binary_of(variant);
    const GemmBaseline& baseline = *baselines[device][variant.shape];
    db::MeasurementRecord record =
        gemm_measurement_record(run.record_context(variant), shape.problem, plan_.gpu,
                                binary.source, binary.kernel, outcome, baseline);
    run.note_counter_policy(record);
    run.record(record, variant.config.key(), shape.problem.key(), outcome_text(record, baseline),
               several ? device_names[device] : "");
    return true;
  };
  work.should_stop = [&] { return run.should_stop(); };
  work.say = [&](const std::string& line) { run.notice(line); };
  pool = std::make_unique<DevicePool>(device_names, work);
  for (std::size_t item = 0; item < pending.size(); ++item) {
    const PendingVariant<GemmConfig>& variant = pending[item];
    const GemmBinary& binary = binary_of(variant);
    if (binary.kernel.ok) {
      pool->push(item);
      continue;
    }
    // Nothing to measure: recorded at once.
    pool->locked([&] {
      const db::MeasurementRecord record = gemm_compile_failure_record(
          run.record_context(variant), plan_.gpu.arch, binary.source, binary.kernel);
      run.record(record, variant.config.key(), plan_.shapes[variant.shape].problem.key(),
                 failed_outcome_text(record));
    });
  }
  pool->finish();
  pool.reset();
}

}  // namespace swr
