#include "tuner/attention_tuning_job.hpp"

#include <iostream>

#include "model/model_prediction.hpp"
#include "model/prediction_report.hpp"
#include "support/interrupt_notice.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/model_ranking.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/tuning_session.hpp"
#include "tuner/tuning/worker_client.hpp"

namespace swr {
namespace {

// Without the named GPU: compile what a tune would measure, rank it by the L2 model (stored as
// predictions, never as measurements), and say why nothing is timed.
int compile_and_predict(const AttentionTuningJob& job, const std::optional<GpuProfile>& present) {
  const Target& target = job.target;
  const CompileSettings& settings = job.compile;
  const std::filesystem::path& database = job.tuning.database;
  // Cubins are cached as they finish and each shape's predictions are committed whole, so Ctrl-C
  // may stop at once.
  const InterruptNotice interrupt_notice(
      "compiled cubins stay in the cubin cache and predictions already stored stay in " +
      database.string() + "; run the same command again to resume (cached variants are not " +
      "compiled again)");
  int failed = 0;
  std::filesystem::path cache_dir;
  int compiled = 0;
  for (const AttentionProblem& problem : job.problems) {
    const Target shape{problem, target.gpu};
    const AttentionSpace space = select_space(shape, job.config_keys);
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
    std::vector<model::ModelPrediction> predictions =
        model::predict_space(problem, target.gpu, configs, {}, settings.jobs,
                             compiled_registers(configs, outcome.results));
    model::apply_time_model(predictions, problem, target.gpu, model::embedded_time_model());
    // Stored first: output that cannot be written (a closed pipe, a full disk) loses nothing.
    const int stored = store_predictions(database, shape, predictions);
    std::cout << model::format_prediction_table(problem, target.gpu, predictions)
              << prediction_accuracy_text("attention");
    std::cout << "stored " << stored << " predictions (model " << kScheduleModelName << " v"
              << kScheduleModelVersion << ") in " << database.string()
              << "; they are kept apart from measurements\n\n";
  }
  if (job.tuning.model_top) {
    std::cout << "--model-top " << *job.tuning.model_top
              << " chooses what to measure where the GPU is present; here the ranking above is "
                 "all there is\n";
  }
  std::cout << timing_needs_gpu(target.gpu, present) << " (compiled " << compiled
            << " variants for " << target.gpu.arch << "; cubins cached in " << cache_dir.string()
            << ")\n";
  return failed > 0 ? 1 : 0;
}

}  // namespace

std::vector<AttentionProblem> attention_problems_to_tune(const AttentionProblem& problem,
                                                         bool both) {
  if (!both) return {problem};
  AttentionProblem non_causal = problem, causal = problem;
  non_causal.causal = false;
  causal.causal = true;
  causal.validate();
  return {non_causal, causal};
}

int run_attention_tuning_job(const AttentionTuningJob& job) {
  const std::optional<GpuProfile> present = detect_present_gpu();
  if (!present || !is_same_gpu(*present, job.target.gpu)) return compile_and_predict(job, present);

  // Tune for the device as it is (its own SM count, L2 and shared memory), not the datasheet.
  TuningPlan plan{tuning_settings(*present, job.tuning, job.compile), {}};
  for (const AttentionProblem& problem : job.problems) {
    const Target shape{problem, *present};
    TuningShape tuning_shape{problem,
                             variants_to_compile(shape, select_space(shape, job.config_keys), 0)};
    if (job.tuning.model_top) {
      // The model ranks for the GPU as named (its datasheet rates); the session measures on the
      // device as it is.
      tuning_shape.configs =
          model_guided_variants(Target{problem, job.target.gpu}, tuning_shape.configs,
                                *job.tuning.model_top, job.compile, plan.selection);
    }
    if (job.plant_fault) {
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

}  // namespace swr
