#include "cli/commands.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/job_options.hpp"
#include "generator/cubin_cache.hpp"
#include "model/model_prediction.hpp"
#include "model/prediction_report.hpp"
#include "swr/usage_error.hpp"
#include "tuner/model_ranking.hpp"

namespace swr::cli {

CLI::App* add_model_command(CLI::App& app, ModelOptions& options) {
  CLI::App* command = app.add_subcommand(
      "model", "Predict each variant's L2 misses and time with the L2 model (no GPU needed)");
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
      "The model predicts attention variants only: --family gemm takes the GEMM shape options and "
      "says so.\n"
      "Example: swr-tune model --gpu gb10 --seq 131072 --batch 8 --head-dim 64");
  return command;
}

int run_model_command(const ModelOptions& options) {
  if (is_gemm_family(options.problem.gemm)) {
    // Every value is checked as for `space --family gemm`, then the missing model is bad input.
    resolve_gemm_selection(options.problem,
                           "--gpu, --m, --n, --k, --size, --dtype, --config and --json");
    throw UsageError(
        "the L2 model predicts attention variants only; GEMM prediction is not implemented");
  }
  const Target target = resolve_target(options.problem);
  const AttentionSpace space = select_space(target, options.problem.config_keys);
  CompileOptions compile_options;
  compile_options.jobs = options.jobs;
  compile_options.cache_dir = options.cache_dir;
  const CompileSettings settings = parse_compile_options(compile_options);  // checks both
  const std::vector<int> registers = options.estimate_registers
                                         ? std::vector<int>{}
                                         : registers_by_compiling(target, space.configs, settings);
  const std::vector<model::ModelPrediction> predictions =
      model::predict_space(target.problem, target.gpu, space.configs, {}, 0, registers);
  if (options.json) {
    std::cout << model::prediction_report_json(target.problem, target.gpu, predictions).dump(2)
              << '\n';
  } else {
    std::cout << model::format_prediction_table(target.problem, target.gpu, predictions);
  }
  return 0;
}

}  // namespace swr::cli
