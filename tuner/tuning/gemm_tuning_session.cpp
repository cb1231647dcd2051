#include "tuner/tuning/gemm_tuning_session.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>

#include "generator/cubin_cache.hpp"
#include "generator/gemm_binaries.hpp"
#include "generator/gemm_kernel_source.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/text_format.hpp"
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
    : plan_(std::move(plan)), measurer_(measurer), interrupt_(interrupt) {}

GemmTuningSummary GemmTuningSession::run() {
  GemmTuningSummary summary;
  summary.baselines.resize(plan_.shapes.size());
  TuningRun run(plan_, interrupt_, summary);
  std::vector<PendingVariant<GemmConfig>> pending = run.find_missing(plan_.shapes, "gemm ");
  if (pending.empty()) {
    print_tables(run, plan_, summary);
    run.say_everything_measured();
    return summary;
  }

  const NvrtcCompiler compiler;
  run.create_rows(plan_.shapes, pending, compiler.version());
  const std::vector<std::map<std::string, GemmBinary>> binaries =
      compile_binaries(plan_, pending, compiler);

  const std::uint64_t seed = fresh_random_seed();
  std::vector<bool> baseline_measured(plan_.shapes.size(), false);
  run.start_progress(pending);
  for (const PendingVariant<GemmConfig>& variant : pending) {
    if (run.should_stop()) break;
    const GemmTuningShape& shape = plan_.shapes[variant.shape];
    GemmBaseline& baseline = summary.baselines[variant.shape];
    if (!baseline_measured[variant.shape]) {
      baseline_measured[variant.shape] = true;
      baseline = measure_baseline(measurer_, shape.problem, plan_.gpu, seed);
      run.say(baseline_line(shape.problem, baseline));
    }

    const GemmBinary& binary =
        binaries[variant.shape].at(gemm_binary_name(shape.problem, variant.config));
    const VariantRecordContext context = run.record_context(variant);
    db::MeasurementRecord record;
    if (!binary.kernel.ok) {
      record = gemm_compile_failure_record(context, plan_.gpu.arch, binary.source, binary.kernel);
    } else {
      GemmVariantJob job;
      job.problem = shape.problem;
      job.config = variant.config;
      job.cubin = binary.kernel.cubin;
      job.dynamic_shared_bytes = binary.source.dynamic_shared_bytes;
      job.gpu = plan_.gpu;
      job.seed = seed;
      const VariantOutcome outcome = measurer_.measure(job);
      if (!run.accept(outcome)) break;
      record = gemm_measurement_record(context, shape.problem, plan_.gpu, binary.source,
                                       binary.kernel, outcome, baseline);
    }
    run.record(record, variant.config.key(), shape.problem.key(), outcome_text(record, baseline));
  }
  run.finish_progress();
  print_tables(run, plan_, summary);
  run.say_closing();
  return summary;
}

}  // namespace swr
