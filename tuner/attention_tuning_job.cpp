#include "tuner/attention_tuning_job.hpp"

#include <iostream>

#include "model/model_prediction.hpp"
#include "model/prediction_report.hpp"
#include "support/interrupt_notice.hpp"
#include "tuner/model_ranking.hpp"
#include "tuner/tuning_request.hpp"

namespace swr {

int compile_and_predict(const GpuProfile& gpu, const std::vector<PlannedAttention>& planned,
                        const CompileSettings& settings, const std::filesystem::path& database,
                        const std::optional<GpuProfile>& present, std::optional<int> model_top) {
  // Cubins are cached as they finish and each shape's predictions are committed whole, so Ctrl-C
  // may stop at once.
  const InterruptNotice interrupt_notice(
      "compiled cubins stay in the cubin cache and predictions already stored stay in " +
      database.string() + "; run the same command again to resume (cached variants are not " +
      "compiled again)");
  // Every problem's space first: a config a later one cannot run is refused before any compile.
  std::vector<AttentionSpace> spaces;
  for (const PlannedAttention& item : planned) {
    spaces.push_back(select_space(Target{item.problem, gpu}, item.config_keys));
  }
  int failed = 0;
  std::filesystem::path cache_dir;
  int compiled = 0;
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const AttentionProblem& problem = planned[i].problem;
    const Target shape{problem, gpu};
    const AttentionSpace& space = spaces[i];
    const std::vector<AttentionConfig> configs = variants_to_compile(shape, space, settings.limit);
    std::cout << "tuning " << problem.key() << " on " << gpu.name << " (" << gpu.arch
              << "): " << configs.size() << " variants to compile, " << space.pruned.size()
              << " pruned\n"
              << std::flush;
    const CompileOutcome outcome = compile_variants(shape, configs, settings);
    print_compile_summary(shape, outcome);
    failed += outcome.failed;
    compiled += outcome.succeeded();
    cache_dir = outcome.cache_dir;

    std::cout << "\n" << std::flush;
    std::vector<model::ModelPrediction> predictions = model::predict_space(
        problem, gpu, configs, {}, settings.jobs, compiled_registers(configs, outcome.results));
    model::apply_time_model(predictions, problem, gpu, model::embedded_time_model());
    // Stored first: output that cannot be written (a closed pipe, a full disk) loses nothing.
    const int stored = store_predictions(database, shape, predictions);
    std::cout << model::format_prediction_table(problem, gpu, predictions)
              << prediction_accuracy_text("attention");
    std::cout << "stored " << stored << " predictions (model " << kScheduleModelName << " v"
              << kScheduleModelVersion << ") in " << database.string()
              << "; they are kept apart from measurements\n\n";
  }
  if (model_top) {
    std::cout << "--model-top " << *model_top
              << " chooses what to measure where the GPU is present; here the ranking above is "
                 "all there is\n";
  }
  std::cout << timing_needs_gpu(gpu, present) << " (compiled " << compiled << " variants for "
            << gpu.arch << "; cubins cached in " << cache_dir.string() << ")\n";
  return failed > 0 ? 1 : 0;
}

std::vector<AttentionProblem> attention_problems_to_tune(const AttentionProblem& problem,
                                                         bool both) {
  if (!both) return {problem};
  AttentionProblem non_causal = problem, causal = problem;
  non_causal.causal = false;
  causal.causal = true;
  causal.validate();
  return {non_causal, causal};
}

std::vector<TuningShape> attention_tuning_shapes(const std::vector<PlannedAttention>& planned,
                                                 const GpuProfile& gpu, bool plant_fault,
                                                 const AttentionVariantChoice& choose) {
  std::vector<TuningShape> shapes;
  for (const PlannedAttention& item : planned) {
    const Target shape{item.problem, gpu};
    TuningShape tuning_shape{item.problem,
                             variants_to_compile(shape, select_space(shape, item.config_keys), 0)};
    if (choose) tuning_shape.configs = choose(item.problem, tuning_shape.configs);
    if (plant_fault) {
      // First, so that --limit keeps it.
      AttentionConfig planted = tuning_shape.configs.front();
      planted.planted_fault = true;
      tuning_shape.configs.insert(tuning_shape.configs.begin(), planted);
    }
    shapes.push_back(std::move(tuning_shape));
  }
  return shapes;
}

}  // namespace swr
