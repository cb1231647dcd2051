#include "cli/tuning_job.hpp"

#include <iostream>

#include "cli/model_ranking.hpp"
#include "cli/variant_compilation.hpp"
#include "db/database_location.hpp"
#include "driver/device_context.hpp"
#include "model/model_prediction.hpp"
#include "model/prediction_report.hpp"
#include "swr/usage_error.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/tuning_session.hpp"
#include "tuner/tuning/worker_client.hpp"

namespace swr::cli {
namespace {

// The problems to tune: the one asked for, or its causal and non-causal forms with --both.
std::vector<AttentionProblem> problems_of(const Target& target, bool both) {
  if (!both) return {target.problem};
  AttentionProblem non_causal = target.problem, causal = target.problem;
  non_causal.causal = false;
  causal.causal = true;
  causal.validate();
  return {non_causal, causal};
}

// Without the named GPU: compile what a tune would measure, rank it by the L2 model (stored as
// predictions, never as measurements), and say why nothing is timed.
int compile_and_predict(const Target& target, const std::vector<AttentionProblem>& problems,
                        const ProblemOptions& options, const CompileSettings& settings,
                        const std::optional<GpuProfile>& present,
                        const std::filesystem::path& database) {
  int failed = 0;
  std::filesystem::path cache_dir;
  int compiled = 0;
  for (const AttentionProblem& problem : problems) {
    const Target shape{problem, target.gpu};
    const AttentionSpace space = select_space(shape, options.config_keys);
    const std::vector<AttentionConfig> configs = variants_to_compile(shape, space, settings.limit);
    std::cout << "tuning " << problem.key() << " on " << target.gpu.name << " (" << target.gpu.arch
              << "): " << configs.size() << " variants to compile, " << space.pruned.size()
              << " pruned\n"
              << std::flush;
    const CompileOutcome outcome = compile_variants(shape, configs, settings);
    print_compile_summary(shape, outcome);
    failed += outcome.failed;
    compiled += outcome.succeeded();
    cache_dir = outcome.cache_dir;

    std::cout << "\n" << std::flush;
    const std::vector<model::ModelPrediction> predictions =
        model::predict_space(problem, target.gpu, configs, {}, settings.jobs,
                             compiled_registers(configs, outcome.results));
    std::cout << model::format_prediction_table(problem, target.gpu, predictions);
    const int stored = store_predictions(database, shape, predictions);
    std::cout << "stored " << stored << " predictions (model " << kScheduleModelName << " v"
              << kScheduleModelVersion << ") in " << database.string()
              << "; they are kept apart from measurements\n\n";
  }
  std::cout << timing_needs_gpu(target.gpu, present) << " (compiled " << compiled
            << " variants for " << target.gpu.arch << "; cubins cached in " << cache_dir.string()
            << ")\n";
  return failed > 0 ? 1 : 0;
}

}  // namespace

int run_tuning_job(const ProblemOptions& problem_options, const CompileOptions& compile_options,
                   const TuningOptions& tuning) {
  // Every value first: bad input never touches the device, the compiler or the database.
  if (tuning.both && problem_options.causal) {
    throw UsageError(
        "--both and --causal exclude each other: allowed one of them (--both tunes the causal "
        "and the non-causal shape)");
  }
  if (!compile_options.limit.empty() && !tuning.time_budget.empty()) {
    throw UsageError(
        "--limit and --time-budget exclude each other: allowed one of them (at most N new "
        "variants, or no new variant after SEC seconds)");
  }
  const std::optional<double> time_budget = parse_time_budget(tuning);
  const CompileSettings settings = parse_compile_options(compile_options);
  Target target = resolve_target(problem_options);
  const std::vector<AttentionProblem> problems = problems_of(target, tuning.both);
  selected_device_ordinal();  // a bad $SWR_DEVICE is bad input too
  const db::DatabaseLocation location = db::locate_database(
      tuning.database_given ? std::optional<std::string>(tuning.database) : std::nullopt);
  db::check_database_writable(location);

  const std::optional<GpuProfile> present = detect_present_gpu();
  if (!present || !is_same_gpu(*present, target.gpu)) {
    return compile_and_predict(target, problems, problem_options, settings, present, location.path);
  }

  // Tune for the device as it is (its own SM count, L2 and shared memory), not the datasheet.
  target.gpu = *present;
  TuningPlan plan{tuning_settings(*present, location.path, settings, tuning, time_budget), {}};
  for (const AttentionProblem& problem : problems) {
    const Target shape{problem, target.gpu};
    TuningShape tuning_shape{
        problem, variants_to_compile(shape, select_space(shape, problem_options.config_keys), 0)};
    if (tuning.plant_fault) {
      // First, so that --limit keeps it.
      AttentionConfig planted = tuning_shape.configs.front();
      planted.planted_fault = true;
      tuning_shape.configs.insert(tuning_shape.configs.begin(), planted);
    }
    plan.shapes.push_back(std::move(tuning_shape));
  }

  InterruptFlag interrupt;
  const ScopedInterruptHandler handler(interrupt);
  WorkerClient worker(measurement_worker_command(), WorkerTimeouts{}, &interrupt);
  TuningSession session(std::move(plan), worker, interrupt);
  return session.run().exit_code();
}

}  // namespace swr::cli
