#include "tuner/tuning/tuning_session.hpp"

#include <cstdio>
#include <iostream>
#include <map>

#include "generator/cubin_cache.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/parallel_compiler.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/tuning/result_table.hpp"
#include "tuner/tuning/timing_statistics.hpp"
#include "tuner/tuning/tuning_run.hpp"
#include "tuner/tuning/variant_record.hpp"

namespace swr {
namespace {

// Thrown from the compile callback to stop compiling and measuring.
struct StopTuning {};

std::string variant_id(const AttentionProblem& problem, const AttentionConfig& config) {
  return problem.key() + "/" + config.key();
}

// "ok  1.234 ms  345.6 TFLOP/s  L2 misses 1.20e9  hit 56.0%  DRAM 109.2 GB", or the failure.
std::string outcome_text(const db::MeasurementRecord& record) {
  if (record.status != db::MeasurementStatus::ok) return failed_outcome_text(record);
  char text[200];
  std::snprintf(text, sizeof(text), "ok  %s ms  %.1f TFLOP/s  L2 misses %s  hit %s  DRAM %s GB",
                format_milliseconds(record.median_ms).c_str(), record.tflops.value_or(0),
                format_count(record.l2_sector_misses).c_str(),
                format_hit_rate(record.l2_hit_rate).c_str(), format_dram_gigabytes(record).c_str());
  return text;
}

// Per stored shape: its variants by time, and cyclic against sawtooth.
void print_results(TuningRun& run, const TuningPlan& plan) {
  if (!run.gpu_id()) return;
  for (std::size_t shape = 0; shape < plan.shapes.size(); ++shape) {
    const std::optional<db::ProblemId>& problem_id = run.problem_id(shape);
    if (!problem_id) continue;
    const std::vector<db::StoredMeasurement> measurements =
        run.database().measurements_for(*run.gpu_id(), *problem_id);
    int failed = 0;
    for (const db::StoredMeasurement& measurement : measurements) {
      if (measurement.record.status != db::MeasurementStatus::ok) ++failed;
    }
    std::cout << "\n"
              << plan.shapes[shape].problem.key() << " on " << plan.gpu.name << " ("
              << plan.gpu.description << "): " << measurements.size() << " variants measured, "
              << failed << " failed\n";
    print_top_variants(std::cout, measurements, plan.table_rows);
    print_order_comparison(std::cout, measurements);
  }
  std::cout << std::flush;
}

}  // namespace

TuningSession::TuningSession(TuningPlan plan, VariantMeasurer& measurer,
                             const InterruptFlag& interrupt)
    : plan_(std::move(plan)), measurer_(measurer), interrupt_(interrupt) {}

TuningSummary TuningSession::run() {
  TuningSummary summary;
  TuningRun run(plan_, interrupt_, summary);
  std::vector<PendingVariant<AttentionConfig>> pending = run.find_missing(plan_.shapes, "");
  if (pending.empty()) {
    print_results(run, plan_);
    run.say_everything_measured();
    return summary;
  }

  const NvrtcCompiler compiler;
  run.create_rows(plan_.shapes, pending, compiler.version());
  // The best median of each shape so far (the database's, then this run's): a variant far slower
  // than it gets one timed run (kSlowVariantFactor).
  std::vector<std::optional<double>> best_ms(plan_.shapes.size());
  for (std::size_t shape = 0; shape < plan_.shapes.size(); ++shape) {
    if (const auto best = run.database().best_for(*run.gpu_id(), *run.problem_id(shape))) {
      best_ms[shape] = best->record.median_ms;
    }
  }
  std::map<std::string, std::size_t> pending_by_id;
  std::vector<CompileJob> jobs;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const AttentionProblem& problem = plan_.shapes[pending[i].shape].problem;
    pending_by_id[variant_id(problem, pending[i].config)] = i;
    jobs.push_back(CompileJob{problem, pending[i].config, plan_.gpu.arch});
  }

  const CubinCache cache(plan_.cubin_cache);
  const std::uint64_t seed = fresh_random_seed();  // fresh inputs for every tuning run
  run.start_progress(pending);
  // Each variant is measured as soon as it is compiled, while the others go on compiling.
  const auto on_compiled = [&](const CompileResult& compiled) {
    if (run.should_stop()) throw StopTuning{};
    const PendingVariant<AttentionConfig>& variant =
        pending.at(pending_by_id.at(variant_id(compiled.job.problem, compiled.job.config)));
    const VariantRecordContext context = run.record_context(variant);
    db::MeasurementRecord record;
    if (!compiled.kernel.ok) {
      record = compile_failure_record(context, compiled);
    } else {
      std::optional<double> stop_timing_above_ms;
      if (best_ms[variant.shape])
        stop_timing_above_ms = *best_ms[variant.shape] * kSlowVariantFactor;
      const VariantJob job{compiled.job.problem,
                           compiled.job.config,
                           compiled.kernel.cubin,
                           compiled.source.dynamic_shared_bytes,
                           plan_.gpu,
                           seed,
                           stop_timing_above_ms};
      const VariantOutcome outcome = measurer_.measure(job);
      if (!run.accept(outcome)) throw StopTuning{};
      record = measured_variant_record(context, compiled.job.problem, plan_.gpu, compiled, outcome);
    }
    const auto selection =
        plan_.selection.find(variant_id(compiled.job.problem, compiled.job.config));
    if (selection != plan_.selection.end()) record.method["selection"] = selection->second;
    run.record(record, compiled.job.config.key(), compiled.job.problem.key(), outcome_text(record));
    if (record.status == db::MeasurementStatus::ok && record.median_ms &&
        (!best_ms[variant.shape] || *record.median_ms < *best_ms[variant.shape])) {
      best_ms[variant.shape] = record.median_ms;
    }
  };

  try {
    compile_in_parallel(compiler, &cache, jobs, plan_.compile_threads, on_compiled);
  } catch (const StopTuning&) {
    // compile_in_parallel has let the compiles in flight finish; nothing else to undo.
  }
  run.finish_progress();
  print_results(run, plan_);
  run.say_closing();
  return summary;
}

}  // namespace swr
