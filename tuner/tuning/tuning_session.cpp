#include "tuner/tuning/tuning_session.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "db/results_database.hpp"
#include "generator/cubin_cache.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/parallel_compiler.hpp"
#include "tuner/cli/progress_display.hpp"
#include "tuner/cli/text_format.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/tuning/result_table.hpp"
#include "tuner/tuning/timing_statistics.hpp"
#include "tuner/tuning/variant_record.hpp"

namespace swr {
namespace {

using Clock = std::chrono::steady_clock;

// Thrown from the compile callback to stop compiling and measuring.
struct StopTuning {};

struct PendingVariant {
  std::size_t shape = 0;
  AttentionConfig config;
  db::ConfigId config_id{};
};

std::string variant_id(const AttentionProblem& problem, const AttentionConfig& config) {
  return problem.key() + "/" + config.key();
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// "ok  1.234 ms  345.6 TFLOP/s  L2 misses 1.20e9  hit 56.0%  DRAM 109.2 GB", or the failure.
std::string outcome_text(const db::MeasurementRecord& record) {
  if (record.status != db::MeasurementStatus::ok) {
    std::string status(db::to_string(record.status));
    for (char& c : status) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return status + "  " + first_line(record.error);
  }
  char text[200];
  std::snprintf(text, sizeof(text), "ok  %s ms  %.1f TFLOP/s  L2 misses %s  hit %s  DRAM %s GB",
                format_milliseconds(record.median_ms).c_str(), record.tflops.value_or(0),
                format_count(record.l2_sector_misses).c_str(),
                format_hit_rate(record.l2_hit_rate).c_str(), format_dram_gigabytes(record).c_str());
  return text;
}

void print_results(const db::ResultsDatabase& database, db::GpuId gpu,
                   const std::vector<std::pair<AttentionProblem, db::ProblemId>>& problems,
                   const GpuProfile& profile, std::size_t rows) {
  for (const auto& [problem, problem_id] : problems) {
    const std::vector<db::StoredMeasurement> measurements =
        database.measurements_for(gpu, problem_id);
    int failed = 0;
    for (const db::StoredMeasurement& measurement : measurements) {
      if (measurement.record.status != db::MeasurementStatus::ok) ++failed;
    }
    std::cout << "\n"
              << problem.key() << " on " << profile.name << " (" << profile.description
              << "): " << measurements.size() << " variants measured, " << failed << " failed\n";
    print_top_variants(std::cout, measurements, rows);
    print_order_comparison(std::cout, measurements);
  }
  std::cout << std::flush;
}

}  // namespace

TuningSession::TuningSession(TuningPlan plan, VariantMeasurer& measurer,
                             const InterruptFlag& interrupt)
    : plan_(std::move(plan)), measurer_(measurer), interrupt_(interrupt) {}

TuningSummary TuningSession::run() {
  const Clock::time_point start = Clock::now();
  TuningSummary summary;
  db::ResultsDatabase database(plan_.database);
  db::GpuRecord gpu_record = db::GpuRecord::from_profile(plan_.gpu);
  gpu_record.driver_version = plan_.driver_version;

  // What is missing, from the database alone: a complete shape needs no compiler and no device.
  std::optional<db::GpuId> gpu_id = database.find_gpu(gpu_record);
  std::vector<PendingVariant> pending;
  for (std::size_t shape = 0; shape < plan_.shapes.size(); ++shape) {
    const TuningShape& tuning_shape = plan_.shapes[shape];
    std::set<std::string> measured;
    const std::optional<db::ProblemId> problem_id = database.find_problem(tuning_shape.problem);
    if (gpu_id && problem_id && !plan_.retune) {
      measured = database.measured_config_keys(*gpu_id, *problem_id);
    }
    for (const AttentionConfig& config : tuning_shape.configs) {
      if (measured.count(config.key()) > 0) {
        ++summary.already_measured;
      } else {
        pending.push_back({shape, config, {}});
      }
    }
  }
  if (plan_.limit && pending.size() > static_cast<std::size_t>(*plan_.limit)) {
    summary.left_for_later = static_cast<int>(pending.size()) - *plan_.limit;
    pending.resize(static_cast<std::size_t>(*plan_.limit));
  }
  summary.planned = static_cast<int>(pending.size());

  for (const TuningShape& shape : plan_.shapes) {
    std::cout << "tuning " << shape.problem.key() << " on " << plan_.gpu.name << " ("
              << plan_.gpu.description << ", " << plan_.gpu.arch << "): " << shape.configs.size()
              << " variants\n";
  }
  std::cout << summary.planned << " to measure, " << summary.already_measured << " already in "
            << plan_.database.string();
  if (summary.left_for_later > 0) {
    std::cout << ", " << summary.left_for_later << " left for a later run (--limit)";
  }
  std::cout << "\n" << std::flush;

  std::vector<std::pair<AttentionProblem, db::ProblemId>> problem_ids;
  if (pending.empty()) {
    if (gpu_id) {
      for (const TuningShape& shape : plan_.shapes) {
        if (auto id = database.find_problem(shape.problem))
          problem_ids.emplace_back(shape.problem, *id);
      }
      print_results(database, *gpu_id, problem_ids, plan_.gpu, plan_.table_rows);
    }
    std::cout << "everything is measured (--retune measures again)\n";
    return summary;
  }

  const NvrtcCompiler compiler;
  gpu_record.cuda_version = compiler.version();
  gpu_id = database.upsert_gpu(gpu_record);
  // The best median of each shape so far (the database's, then this run's): a variant far slower
  // than it gets one timed run (kSlowVariantFactor).
  std::vector<std::optional<double>> best_ms(plan_.shapes.size());
  for (std::size_t shape = 0; shape < plan_.shapes.size(); ++shape) {
    problem_ids.emplace_back(plan_.shapes[shape].problem,
                             database.upsert_problem(plan_.shapes[shape].problem));
    if (const auto best = database.best_for(*gpu_id, problem_ids.back().second)) {
      best_ms[shape] = best->record.median_ms;
    }
  }
  std::map<std::string, std::size_t> pending_by_id;
  std::vector<CompileJob> jobs;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    PendingVariant& variant = pending[i];
    variant.config_id = database.upsert_config(variant.config);
    const AttentionProblem& problem = plan_.shapes[variant.shape].problem;
    pending_by_id[variant_id(problem, variant.config)] = i;
    jobs.push_back(CompileJob{problem, variant.config, plan_.gpu.arch});
  }

  const CubinCache cache(plan_.cubin_cache);
  const std::uint64_t seed = fresh_random_seed();  // fresh inputs for every tuning run
  bool said_profiling_unavailable = false;
  std::size_t key_width = 0;
  for (const PendingVariant& variant : pending) {
    key_width = std::max(key_width, variant.config.key().size());
  }
  cli::ProgressDisplay display("tuning", summary.planned, false);

  const auto on_compiled = [&](const CompileResult& compiled) {
    if (interrupt_.stop_requested()) {
      summary.interrupted = true;
      throw StopTuning{};
    }
    if (plan_.time_budget_seconds &&
        std::chrono::duration<double>(Clock::now() - start).count() >= *plan_.time_budget_seconds) {
      summary.budget_reached = true;
      throw StopTuning{};
    }
    const PendingVariant& variant =
        pending.at(pending_by_id.at(variant_id(compiled.job.problem, compiled.job.config)));
    const VariantRecordContext context{*gpu_id, problem_ids[variant.shape].second,
                                       variant.config_id, compiler.version(), plan_.driver_version};
    db::MeasurementRecord record;
    if (!compiled.kernel.ok) {
      record = compile_failure_record(context, compiled);
    } else {
      VariantJob job{compiled.job.problem,
                     compiled.job.config,
                     compiled.kernel.cubin,
                     compiled.source.dynamic_shared_bytes,
                     plan_.gpu,
                     seed};
      if (best_ms[variant.shape]) {
        job.stop_timing_above_ms = *best_ms[variant.shape] * kSlowVariantFactor;
      }
      const VariantOutcome outcome = measurer_.measure(job);
      if (outcome.dropped) {
        summary.interrupted = true;
        throw StopTuning{};
      }
      if (!outcome.counters_unavailable.empty() && !said_profiling_unavailable) {
        said_profiling_unavailable = true;
        display.finish();
        std::fprintf(stderr, "swr-tune: %s; L2 counters are stored as missing, timing goes on\n",
                     outcome.counters_unavailable.c_str());
      }
      record = measured_variant_record(context, compiled.job.problem, plan_.gpu, compiled, outcome);
    }
    database.record_measurement(record);
    if (record.status == db::MeasurementStatus::ok && record.median_ms &&
        (!best_ms[variant.shape] || *record.median_ms < *best_ms[variant.shape])) {
      best_ms[variant.shape] = record.median_ms;
    }
    ++summary.recorded;
    if (record.status != db::MeasurementStatus::ok) ++summary.failed;
    std::string key = compiled.job.config.key();
    key.resize(std::max(key.size(), key_width), ' ');
    std::string line = display.next_counter() + " " + key + "  " + outcome_text(record);
    if (plan_.shapes.size() > 1) line += "  (" + compiled.job.problem.key() + ")";
    display.item_done(line);
  };

  try {
    compile_in_parallel(compiler, &cache, jobs, plan_.compile_threads, on_compiled);
  } catch (const StopTuning&) {
    // compile_in_parallel has let the compiles in flight finish; nothing else to undo.
  }
  display.finish();
  print_results(database, *gpu_id, problem_ids, plan_.gpu, plan_.table_rows);

  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::cout << "\nmeasured " << summary.recorded << " of " << summary.planned << " variants in "
            << cli::format_duration(seconds) << " (" << summary.failed << " failed); results in "
            << plan_.database.string() << "\n"
            << std::flush;
  if (summary.interrupted) {
    std::fprintf(stderr,
                 "swr-tune: interrupted: %d of %d variants measured; resume with the same "
                 "command\n",
                 summary.recorded, summary.planned);
  } else if (summary.budget_reached) {
    std::fprintf(stderr,
                 "swr-tune: time budget of %.0f s reached: %d of %d variants measured; the same "
                 "command measures the rest\n",
                 *plan_.time_budget_seconds, summary.recorded, summary.planned);
  } else if (summary.left_for_later > 0) {
    std::fprintf(stderr,
                 "swr-tune: %d variants left for a later run (--limit); the same command "
                 "measures the next ones\n",
                 summary.left_for_later);
  }
  return summary;
}

}  // namespace swr
