#include "tuner/tuning/gemm_tuning_session.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "db/results_database.hpp"
#include "generator/cubin_cache.hpp"
#include "generator/gemm_binaries.hpp"
#include "generator/gemm_kernel_source.hpp"
#include "tuner/cli/progress_display.hpp"
#include "tuner/cli/text_format.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/tuning/gemm_table.hpp"
#include "tuner/tuning/result_table.hpp"
#include "tuner/tuning/timing_statistics.hpp"

namespace swr {
namespace {

using Clock = std::chrono::steady_clock;

struct PendingVariant {
  std::size_t shape = 0;
  GemmConfig config;
  db::ConfigId config_id{};
};

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string outcome_text(const db::MeasurementRecord& record, const GemmBaseline& baseline) {
  if (record.status != db::MeasurementStatus::ok) {
    std::string status(db::to_string(record.status));
    for (char& c : status) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return status + "  " + first_line(record.error);
  }
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
    baseline.note = outcome.error.empty() ? "cuBLAS failed" : first_line(outcome.error);
  }
  return baseline;
}

// The stored baseline of a shape that needed no measuring: from its newest rows' method.
GemmBaseline stored_baseline(const std::vector<db::StoredMeasurement>& measurements) {
  GemmBaseline baseline;
  baseline.note = "not measured in this run";
  for (const db::StoredMeasurement& measurement : measurements) {
    const auto found = measurement.record.method.find("cublas_median_ms");
    if (found != measurement.record.method.end() && found->is_number()) {
      baseline.median_ms = found->get<double>();
      baseline.version = measurement.record.method.value("cublas_version", std::string());
      baseline.note.clear();
      break;
    }
  }
  return baseline;
}

}  // namespace

GemmTuningSession::GemmTuningSession(GemmTuningPlan plan, GemmVariantMeasurer& measurer,
                                     const InterruptFlag& interrupt)
    : plan_(std::move(plan)), measurer_(measurer), interrupt_(interrupt) {}

GemmTuningSummary GemmTuningSession::run() {
  const Clock::time_point start = Clock::now();
  GemmTuningSummary summary;
  summary.baselines.resize(plan_.shapes.size());
  db::ResultsDatabase database(plan_.database);
  db::GpuRecord gpu_record = db::GpuRecord::from_profile(plan_.gpu);
  gpu_record.driver_version = plan_.driver_version;

  std::optional<db::GpuId> gpu_id = database.find_gpu(gpu_record);
  std::vector<PendingVariant> pending;
  for (std::size_t shape = 0; shape < plan_.shapes.size(); ++shape) {
    const GemmTuningShape& tuning_shape = plan_.shapes[shape];
    std::set<std::string> measured;
    const std::optional<db::ProblemId> problem_id = database.find_problem(tuning_shape.problem);
    if (gpu_id && problem_id && !plan_.retune) {
      measured = database.measured_config_keys(*gpu_id, *problem_id);
    }
    for (const GemmConfig& config : tuning_shape.configs) {
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
  for (const GemmTuningShape& shape : plan_.shapes) {
    std::cout << "tuning gemm " << shape.problem.key() << " on " << plan_.gpu.name << " ("
              << plan_.gpu.description << ", " << plan_.gpu.arch << "): " << shape.configs.size()
              << " variants\n";
  }
  std::cout << summary.planned << " to measure, " << summary.already_measured << " already in "
            << plan_.database.string();
  if (summary.left_for_later > 0) {
    std::cout << ", " << summary.left_for_later << " left for a later run (--limit)";
  }
  std::cout << "\n" << std::flush;

  std::vector<std::optional<db::ProblemId>> problem_ids(plan_.shapes.size());
  const auto print_tables = [&] {
    if (!gpu_id) return;
    for (std::size_t shape = 0; shape < plan_.shapes.size(); ++shape) {
      if (!problem_ids[shape])
        problem_ids[shape] = database.find_problem(plan_.shapes[shape].problem);
      if (!problem_ids[shape]) continue;
      const auto measurements = database.measurements_for(*gpu_id, *problem_ids[shape]);
      if (!summary.baselines[shape].median_ms && summary.baselines[shape].note.empty()) {
        summary.baselines[shape] = stored_baseline(measurements);
      }
      print_gemm_table(std::cout, plan_.shapes[shape].problem, plan_.gpu, measurements,
                       summary.baselines[shape], plan_.table_rows);
    }
    std::cout << std::flush;
  };
  if (pending.empty()) {
    print_tables();
    std::cout << "everything is measured (--retune measures again)\n";
    return summary;
  }

  const NvrtcCompiler compiler;
  gpu_record.cuda_version = compiler.version();
  gpu_id = database.upsert_gpu(gpu_record);
  for (std::size_t shape = 0; shape < plan_.shapes.size(); ++shape) {
    problem_ids[shape] = database.upsert_problem(plan_.shapes[shape].problem);
  }
  for (PendingVariant& variant : pending)
    variant.config_id = database.upsert_config(variant.config);

  // Every binary first (configs that differ in their swizzle share one), then the measurements.
  const CubinCache cache(plan_.cubin_cache);
  std::vector<std::map<std::string, GemmBinary>> binaries(plan_.shapes.size());
  for (std::size_t shape = 0; shape < plan_.shapes.size(); ++shape) {
    std::vector<GemmConfig> configs;
    for (const PendingVariant& variant : pending)
      if (variant.shape == shape) configs.push_back(variant.config);
    if (configs.empty()) continue;
    const Clock::time_point compile_start = Clock::now();
    binaries[shape] = compile_gemm_binaries(compiler, &cache, plan_.shapes[shape].problem, configs,
                                            plan_.gpu.arch, plan_.compile_threads);
    int failed = 0;
    for (const auto& [name, binary] : binaries[shape]) failed += binary.kernel.ok ? 0 : 1;
    std::cout << "compiled " << binaries[shape].size() << " kernel binaries for "
              << plan_.shapes[shape].problem.key() << " in "
              << cli::format_duration(
                     std::chrono::duration<double>(Clock::now() - compile_start).count())
              << (failed ? " (" + std::to_string(failed) + " failed)" : std::string()) << "\n"
              << std::flush;
  }

  const std::uint64_t seed = fresh_random_seed();
  std::size_t key_width = 0;
  for (const PendingVariant& variant : pending)
    key_width = std::max(key_width, variant.config.key().size());
  bool said_profiling_unavailable = false;
  std::vector<bool> baseline_measured(plan_.shapes.size(), false);
  cli::ProgressDisplay display("tuning", summary.planned, false);
  for (const PendingVariant& variant : pending) {
    if (interrupt_.stop_requested()) {
      summary.interrupted = true;
      break;
    }
    if (plan_.time_budget_seconds &&
        std::chrono::duration<double>(Clock::now() - start).count() >= *plan_.time_budget_seconds) {
      summary.budget_reached = true;
      break;
    }
    const GemmTuningShape& shape = plan_.shapes[variant.shape];
    GemmBaseline& baseline = summary.baselines[variant.shape];
    if (!baseline_measured[variant.shape]) {
      baseline_measured[variant.shape] = true;
      baseline = measure_baseline(measurer_, shape.problem, plan_.gpu, seed);
      std::string line = "cuBLAS on " + shape.problem.key() + ": ";
      if (baseline.median_ms) {
        char text[120];
        std::snprintf(text, sizeof(text), "%.3f ms  %.1f TFLOP/s (%s)", *baseline.median_ms,
                      gemm_tflops(shape.problem, *baseline.median_ms), baseline.version.c_str());
        line += text;
      } else {
        line += baseline.note + "; tuning goes on without the baseline";
      }
      display.finish();
      std::cout << line << "\n" << std::flush;
    }

    const GemmBinary& binary =
        binaries[variant.shape].at(gemm_binary_name(shape.problem, variant.config));
    const VariantRecordContext context{*gpu_id, *problem_ids[variant.shape], variant.config_id,
                                       compiler.version(), plan_.driver_version};
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
      if (outcome.dropped) {
        summary.interrupted = true;
        break;
      }
      if (!outcome.counters_unavailable.empty() && !said_profiling_unavailable) {
        said_profiling_unavailable = true;
        display.finish();
        std::fprintf(stderr, "swr-tune: %s; L2 counters are stored as missing, timing goes on\n",
                     outcome.counters_unavailable.c_str());
      }
      record = gemm_measurement_record(context, shape.problem, plan_.gpu, binary.source,
                                       binary.kernel, outcome, baseline);
    }
    database.record_measurement(record);
    ++summary.recorded;
    if (record.status != db::MeasurementStatus::ok) ++summary.failed;
    std::string key = variant.config.key();
    key.resize(std::max(key.size(), key_width), ' ');
    std::string line = display.next_counter() + " " + key + "  " + outcome_text(record, baseline);
    if (plan_.shapes.size() > 1) line += "  (" + shape.problem.key() + ")";
    display.item_done(line);
  }
  display.finish();
  print_tables();

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
                 "swr-tune: time budget of %.0f s reached: %d of %d variants measured; the "
                 "same command measures the rest\n",
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
