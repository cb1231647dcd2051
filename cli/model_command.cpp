#include "cli/commands.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/job_options.hpp"
#include "generator/attention_backward/attention_backward_family.hpp"
#include "generator/cubin_cache.hpp"
#include "generator/problem_json.hpp"
#include "model/backward_prediction.hpp"
#include "model/gemm_prediction.hpp"
#include "model/model_prediction.hpp"
#include "model/prediction_report.hpp"
#include "model/transfer_check.hpp"
#include "tuner/family_compilation.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/model_ranking.hpp"

namespace swr::cli {

CLI::App* add_model_command(CLI::App& app, ModelOptions& options) {
  CLI::App* command = app.add_subcommand(
      "model", "Predict each variant's L2 misses and time with the model (no GPU needed)");
  add_problem_options(*command, options.problem);
  command->add_flag("--json", options.json, "Print JSON: problem, gpu, twins, predictions");
  command->add_flag("--estimate-registers", options.estimate_registers,
                    "Do not compile: take CTAs per SM from estimated registers (less exact)");
  command->add_option("--jobs", options.jobs, "Compile threads (default: hardware threads)")
      ->type_name("N");
  command
      ->add_option("--cache-dir", options.cache_dir,
                   std::string("Cubin cache (") + kCubinCacheDefaultHelp + ")")
      ->type_name("DIR");
  command->footer(
      "Predictions replay the kernel's tile schedule through an LRU model of the profile's L2,\n"
      "with CTAs per SM from the compiled kernels (compiled once through the cubin cache);\n"
      "they are never stored as measurements.\n"
      "Times come from the time model: step times measured on the H200, scaled to the target,\n"
      "with the DRAM time of the simulated misses (docs/model.md).\n"
      "Examples: swr-tune model --gpu gb10 --seq 131072 --batch 8 --head-dim 64\n"
      "          swr-tune model --family gemm --gpu gb10 --size 8192\n"
      "          swr-tune model --family attention-backward --gpu gb10 --seq 32768 --head-dim 128");
  return command;
}

namespace {

// ptxas's registers of every config, through the cubin cache (none with --estimate-registers);
// --jobs and --cache-dir are checked either way.
template <class Target, class Config>
std::vector<int> model_registers(const ModelOptions& options, const Target& target,
                                 const std::vector<Config>& configs) {
  CompileOptions compile_options;
  compile_options.jobs = options.jobs;
  compile_options.cache_dir = options.cache_dir;
  const CompileSettings settings = parse_compile_options(compile_options);
  return options.estimate_registers ? std::vector<int>{}
                                    : registers_by_compiling(target, configs, settings);
}

int run_gemm_model(const ModelOptions& options) {
  const GemmSelection selection = resolve_gemm_selection(
      options.problem, "--gpu, --m, --n, --k, --size, --dtype, --config and --json");
  const GemmTarget& target = selection.target;
  const GemmSpace space = select_gemm_space(target, selection.wanted);
  const std::vector<int> registers = model_registers(options, target, space.configs);
  const std::vector<model::GemmPrediction> predictions = model::predict_gemm_space(
      target.problem, target.gpu, space.configs, model::embedded_time_model(), 0, registers);
  if (options.json) {
    nlohmann::json json = model::gemm_prediction_json(target.problem, target.gpu, predictions);
    json["transfer_check"] = model::embedded_transfer_check();
    std::cout << json.dump(2) << '\n';
  } else {
    std::cout << model::format_gemm_prediction_table(target.problem, target.gpu, predictions,
                                                     prediction_accuracy_text("gemm"));
  }
  return 0;
}

// The backward's replay takes CTAs per SM from the resource model's register estimate (its
// register counts sit close to the limit, which is what sets one CTA per SM either way).
int run_backward_model(const ModelOptions& options) {
  const AttentionBackwardProblem problem = resolve_backward_problem(options.problem);
  const GpuProfile gpu = resolve_gpu(options.problem.gpu);
  const AttentionBackwardSpace space =
      select_family_space<AttentionBackwardFamily>(problem, gpu, options.problem.config_keys);
  const std::vector<model::BackwardPrediction> predictions =
      model::predict_backward_space(problem, gpu, space.configs);
  if (options.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const model::BackwardPrediction& prediction : predictions) {
      rows.push_back(prediction.to_json());
    }
    std::cout << nlohmann::json{{"family", kAttentionBackwardFamilyName},
                                {"problem", keyed_problem_json(problem)},
                                {"gpu", gpu.name},
                                {"predictions", std::move(rows)}}
                     .dump(2)
              << '\n';
  } else {
    std::cout << model::format_backward_predictions(problem, gpu, predictions);
  }
  return 0;
}

}  // namespace

int run_model_command(const ModelOptions& options) {
  if (is_gemm_family(options.problem.gemm)) return run_gemm_model(options);
  if (is_attention_backward_family(options.problem.gemm)) return run_backward_model(options);
  const Target target = resolve_target(options.problem);
  const AttentionSpace space = select_space(target, options.problem.config_keys);
  const std::vector<int> registers = model_registers(options, target, space.configs);
  std::vector<model::ModelPrediction> predictions =
      model::predict_space(target.problem, target.gpu, space.configs, {}, 0, registers);
  model::apply_time_model(predictions, target.problem, target.gpu, model::embedded_time_model());
  if (options.json) {
    nlohmann::json json = model::prediction_report_json(target.problem, target.gpu, predictions);
    json["transfer_check"] = model::embedded_transfer_check();
    std::cout << json.dump(2) << '\n';
  } else {
    std::cout << model::format_prediction_table(target.problem, target.gpu, predictions)
              << prediction_accuracy_text("attention");
  }
  return 0;
}

}  // namespace swr::cli
