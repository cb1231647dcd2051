// A tuning run of a kernel family whose variants are one binary each (generator/kernel_family.hpp:
// the attention backward; the forward's TuningSession is the same loop), written once against the
// family's descriptor: for each shape, measure every variant of the plan the database lacks for
// this GPU (all with --retune), each committed on its own, while the rest compile in parallel;
// spread over the devices' measurers (device_pool.hpp); stopped by Ctrl-C, --limit or
// --time-budget it keeps what it measured, and the same command measures only what is missing.
// What every family's run does alike (resume, limits, progress, closing words) is tuning_run.hpp.
#pragma once

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "generator/cubin_cache.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/parallel_compiler.hpp"
#include "tuner/tuning/device_pool.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/result_table.hpp"
#include "tuner/tuning/timing_statistics.hpp"
#include "tuner/tuning/tuning_plan.hpp"
#include "tuner/tuning/tuning_run.hpp"
#include "tuner/tuning/variant_measurer.hpp"
#include "tuner/tuning/variant_record.hpp"

namespace swr {

template <class Family>
class FamilyTuningSession {
 public:
  using Problem = typename Family::Problem;
  using Config = typename Family::Config;
  using Plan = TuningPlanOf<Problem, Config>;
  using Measurer = VariantMeasurerOf<Problem, Config>;

  // One measurer per device (plan.device_names names them); asked only when something needs
  // measuring.
  FamilyTuningSession(Plan plan, std::vector<Measurer*> measurers, const InterruptFlag& interrupt)
      : plan_(std::move(plan)), measurers_(std::move(measurers)), interrupt_(interrupt) {}

  // Opens the database and says what the run sets out to do; the number of variants it lacks.
  int find_missing() {
    if (!run_) {
      run_ = std::make_unique<TuningRun>(plan_, interrupt_, summary_);
      pending_ = run_->find_missing(plan_.shapes, std::string(Family::kName) + " ");
    }
    return static_cast<int>(pending_.size());
  }

  // Prints progress and the closing tables on stdout, notices on stderr. `progress`: the display
  // of a whole run of several sessions. Throws UsageError for a database it cannot use,
  // std::runtime_error when measuring is impossible (what is committed stays committed).
  TuningSummary run(ProgressDisplay* progress = nullptr);

 private:
  // Thrown from the compile callback to stop compiling and measuring.
  struct StopTuning {};

  void print_results();
  // Compiles `pending` and measures it on the devices, each committed on its own; the L2 counters
  // only with `collect_counters`.
  void measure_pending(const NvrtcCompiler& compiler, std::vector<PendingVariant<Config>>& pending,
                       bool collect_counters);

  Plan plan_;
  std::vector<Measurer*> measurers_;
  const InterruptFlag& interrupt_;
  TuningSummary summary_;
  std::unique_ptr<TuningRun> run_;
  std::vector<PendingVariant<Config>> pending_;
};

// "ok  1.234 ms  345.6 TFLOP/s  L2 misses 1.20e9  hit 56.0%  DRAM 109.2 GB", or the failure.
std::string measured_outcome_text(const db::MeasurementRecord& record);

template <class Family>
void FamilyTuningSession<Family>::print_results() {
  TuningRun& run = *run_;
  if (!run.gpu_id()) return;
  for (std::size_t shape = 0; shape < plan_.shapes.size(); ++shape) {
    const std::optional<db::ProblemId>& problem_id = run.problem_id(shape);
    if (!problem_id) continue;
    const std::vector<db::StoredMeasurement> measurements =
        run.database().measurements_for(*run.gpu_id(), *problem_id);
    int failed = 0;
    for (const db::StoredMeasurement& measurement : measurements) {
      if (measurement.record.status != db::MeasurementStatus::ok) ++failed;
    }
    std::cout << "\n"
              << plan_.shapes[shape].problem.key() << " on " << plan_.gpu.name << " ("
              << plan_.gpu.description << "): " << measurements.size() << " variants measured, "
              << failed << " failed\n";
    print_top_variants(std::cout, measurements, plan_.table_rows);
    print_order_comparison(std::cout, measurements);
  }
  std::cout << std::flush;
}

template <class Family>
TuningSummary FamilyTuningSession<Family>::run(ProgressDisplay* progress) {
  find_missing();
  TuningRun& run = *run_;
  const bool top_pass = plan_.counters == CountersPolicy::top;
  if (pending_.empty() && !top_pass) {
    print_results();
    run.say_everything_measured();
    return summary_;
  }
  const NvrtcCompiler compiler;
  run.create_rows(plan_.shapes, pending_, compiler.version());
  run.start_progress(pending_, progress);
  run.measure_by_counters_policy(
      plan_.shapes, pending_,
      [&](std::vector<PendingVariant<Config>>& variants, bool collect_counters) {
        measure_pending(compiler, variants, collect_counters);
      });
  run.finish_progress();
  print_results();
  run.say_closing();
  return summary_;
}

template <class Family>
void FamilyTuningSession<Family>::measure_pending(const NvrtcCompiler& compiler,
                                                  std::vector<PendingVariant<Config>>& pending,
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
  std::vector<KernelSource> sources;
  sources.reserve(pending.size());
  for (const PendingVariant<Config>& variant : pending) {
    sources.push_back(Family::render(plan_.shapes[variant.shape].problem, variant.config));
  }

  const CubinCache cache(plan_.cubin_cache);
  const std::uint64_t seed = run.input_seed();
  const std::vector<std::string> device_names = measurer_names(plan_, measurers_.size());
  // Each variant goes to the devices as soon as it is compiled, while the others go on compiling;
  // compiled[i] is written before item i is pushed and read only after it is taken.
  std::vector<CompiledKernel> compiled(pending.size());
  // How a variant came to be measured (--model-top), in its record's method.
  const auto add_selection = [&](db::MeasurementRecord& record, std::size_t item) {
    const std::string id =
        plan_.shapes[pending[item].shape].problem.key() + "/" + pending[item].config.key();
    const auto selection = plan_.selection.find(id);
    if (selection != plan_.selection.end()) record.method["selection"] = selection->second;
  };
  const auto record_of = [&](std::size_t item, const VariantOutcome* outcome) {
    const PendingVariant<Config>& variant = pending[item];
    const Problem& problem = plan_.shapes[variant.shape].problem;
    db::MeasurementRecord record =
        outcome != nullptr
            ? measured_variant_record(run.record_context(variant), problem_work(problem), plan_.gpu,
                                      sources[item], compiled[item], *outcome)
            : compile_failure_record(
                  run.record_context(variant), plan_.gpu.arch, sources[item], compiled[item],
                  "[log cut at " + std::to_string(kMaximumStoredLogBytes) + " bytes]");
    if (outcome != nullptr) {
      const L2Counters& counters = outcome->counters;
      record.method["roofline_bytes"] = counters.dram_bytes_read && counters.dram_bytes_written
                                            ? std::string("measured DRAM bytes")
                                            : compulsory_bytes_note(problem);
    }
    add_selection(record, item);
    return record;
  };

  std::unique_ptr<DevicePool> pool;
  DevicePool::Work work;
  work.measure = [&](std::size_t device, std::size_t item) {
    std::optional<double> stop_timing_above_ms;
    pool->locked([&] {
      if (const auto best = best_ms[pending[item].shape]) {
        stop_timing_above_ms = *best * kSlowVariantFactor;
      }
    });
    const VariantJobOf<Problem, Config> job{plan_.shapes[pending[item].shape].problem,
                                            pending[item].config,
                                            compiled[item].cubin,
                                            sources[item].dynamic_shared_bytes,
                                            plan_.gpu,
                                            seed,
                                            stop_timing_above_ms,
                                            collect_counters};
    return measurers_[device]->measure(job);
  };
  work.record = [&](std::size_t device, std::size_t item, const VariantOutcome& outcome) {
    if (!run.accept(outcome)) return false;
    db::MeasurementRecord record = record_of(item, &outcome);
    run.note_counter_policy(record);
    const PendingVariant<Config>& variant = pending[item];
    run.record(record, variant.config.key(), plan_.shapes[variant.shape].problem.key(),
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

  const auto on_compiled = [&](std::size_t item, CompiledKernel&& kernel) {
    compiled[item] = std::move(kernel);
    bool stop = pool->stopped();
    if (!stop && !compiled[item].ok) {
      // Nothing to measure: recorded here, in the devices' turn.
      pool->locked([&] {
        stop = run.should_stop();
        if (!stop) {
          const db::MeasurementRecord record = record_of(item, nullptr);
          run.record(record, pending[item].config.key(),
                     plan_.shapes[pending[item].shape].problem.key(),
                     measured_outcome_text(record));
        }
      });
    }
    if (stop) throw StopTuning{};
    if (!compiled[item].ok) return;
    pool->push(item);
  };

  try {
    compile_sources_in_parallel(compiler, &cache, sources, plan_.gpu.arch, plan_.compile_threads,
                                on_compiled);
  } catch (const StopTuning&) {
    // The compiles in flight have finished; nothing else to undo.
  }
  pool->finish();  // the devices measure what was pushed (unless the run stops)
  pool.reset();
}

}  // namespace swr
