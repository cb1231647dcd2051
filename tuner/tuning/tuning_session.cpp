#include "tuner/tuning/tuning_session.hpp"

#include <cstdio>
#include <iostream>
#include <map>

#include "generator/cubin_cache.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/parallel_compiler.hpp"
#include "tuner/tuning/device_pool.hpp"
#include "tuner/tuning/family_tuning_session.hpp"
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
    : TuningSession(std::move(plan), std::vector<VariantMeasurer*>{&measurer}, interrupt) {}

TuningSession::TuningSession(TuningPlan plan, std::vector<VariantMeasurer*> measurers,
                             const InterruptFlag& interrupt)
    : plan_(std::move(plan)), measurers_(std::move(measurers)), interrupt_(interrupt) {}

TuningSession::~TuningSession() = default;

int TuningSession::find_missing() {
  if (!run_) {
    run_ = std::make_unique<TuningRun>(plan_, interrupt_, summary_);
    pending_ = run_->find_missing(plan_.shapes, "");
  }
  return static_cast<int>(pending_.size());
}

TuningSummary TuningSession::run(ProgressDisplay* progress) {
  find_missing();
  TuningRun& run = *run_;
  const bool top_pass = plan_.counters == CountersPolicy::top;
  if (pending_.empty() && !top_pass) {
    print_results(run, plan_);
    run.say_everything_measured();
    return summary_;
  }
  const NvrtcCompiler compiler;
  run.create_rows(plan_.shapes, pending_, compiler.version());
  run.start_progress(pending_, progress);
  run.measure_by_counters_policy(
      plan_.shapes, pending_,
      [&](std::vector<PendingVariant<AttentionConfig>>& variants, bool collect_counters) {
        measure_pending(compiler, variants, collect_counters);
      });
  run.finish_progress();
  print_results(run, plan_);
  run.say_closing();
  return summary_;
}

void TuningSession::measure_pending(const NvrtcCompiler& compiler,
                                    std::vector<PendingVariant<AttentionConfig>>& pending,
                                    bool collect_counters) {
  TuningRun& run = *run_;
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
  const std::uint64_t seed = run.input_seed();
  const std::vector<std::string> device_names = measurer_names(plan_, measurers_.size());
  // Each variant goes to the devices as soon as it is compiled, while the others go on compiling;
  // compiled[i] is written before item i is pushed and read only after it is taken.
  std::vector<CompileResult> compiled(pending.size());
  // How a variant came to be measured (--model-top), in its record's method.
  const auto add_selection = [&](db::MeasurementRecord& record, const CompileResult& result) {
    const auto selection = plan_.selection.find(variant_id(result.job.problem, result.job.config));
    if (selection != plan_.selection.end()) record.method["selection"] = selection->second;
  };
  std::unique_ptr<DevicePool> pool;
  DevicePool::Work work;
  const auto job_of = [&](std::size_t item) {
    const CompileResult& result = compiled[item];
    std::optional<double> stop_timing_above_ms;
    pool->locked([&] {
      if (const auto best = best_ms[pending[item].shape]) {
        stop_timing_above_ms = *best * kSlowVariantFactor;
      }
    });
    return VariantJob{result.job.problem,
                      result.job.config,
                      result.kernel.cubin,
                      result.source.dynamic_shared_bytes,
                      plan_.gpu,
                      seed,
                      stop_timing_above_ms,
                      collect_counters};
  };
  work.measure = [&](std::size_t device, std::size_t item) {
    return measurers_[device]->measure(job_of(item));
  };
  // Counters in batches: one profiling session for many variants (variant_batches.hpp).
  const std::size_t batch_size = counter_batch_size(measurers_, collect_counters);
  if (batch_size > 1) {
    work.batch_size = batch_size;
    work.measure_batch = [&](std::size_t device, const std::vector<std::size_t>& items) {
      std::vector<VariantJob> jobs;
      for (std::size_t item : items) jobs.push_back(job_of(item));
      return measurers_[device]->measure_batch(jobs);
    };
  }
  work.record = [&](std::size_t device, std::size_t item, const VariantOutcome& outcome) {
    if (!run.accept(outcome)) return false;
    const CompileResult& result = compiled[item];
    const PendingVariant<AttentionConfig>& variant = pending[item];
    db::MeasurementRecord record = measured_variant_record(
        run.record_context(variant), result.job.problem, plan_.gpu, result, outcome);
    add_selection(record, result);
    run.note_counter_policy(record);
    run.record(record, result.job.config.key(), result.job.problem.key(),
               measured_outcome_text(record), measurers_.size() > 1 ? device_names[device] : "");
    std::optional<double>& best = best_ms[variant.shape];
    if (record.status == db::MeasurementStatus::ok && record.median_ms &&
        (!best || *record.median_ms < *best)) {
      best = record.median_ms;
    }
    return true;
  };
  work.should_stop = [&] { return run.should_stop(); };
  work.say = [&](const std::string& line) { run.notice(line); };
  pool = std::make_unique<DevicePool>(device_names, work);

  const auto on_compiled = [&](const CompileResult& result) {
    const std::size_t item = pending_by_id.at(variant_id(result.job.problem, result.job.config));
    bool stop = pool->stopped();
    if (!stop && !result.kernel.ok) {
      // Nothing to measure: recorded here, in the devices' turn.
      pool->locked([&] {
        stop = run.should_stop();
        if (!stop) {
          db::MeasurementRecord record =
              compile_failure_record(run.record_context(pending[item]), result);
          add_selection(record, result);
          run.record(record, result.job.config.key(), result.job.problem.key(),
                     measured_outcome_text(record));
        }
      });
    }
    if (stop) throw StopTuning{};
    if (!result.kernel.ok) return;
    compiled[item] = result;
    pool->push(item);
  };

  try {
    compile_in_parallel(compiler, &cache, jobs, plan_.compile_threads, on_compiled);
  } catch (const StopTuning&) {
    // compile_in_parallel has let the compiles in flight finish; nothing else to undo.
  }
  pool->finish();  // the devices measure what was pushed (unless the run stops)
  pool.reset();
}

}  // namespace swr
