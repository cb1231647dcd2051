#include "cli/compile_command.hpp"

#include <iostream>

#include "cli/kernel_directory.hpp"
#include "cli/variant_compilation.hpp"

namespace swr::cli {

CLI::App* add_compile_command(CLI::App& app, CompileCommandOptions& options) {
  CLI::App* command = app.add_subcommand(
      "compile",
      "Compile the pruned space for the target GPU with NVRTC (cached), reporting cubin size, "
      "registers, spills and shared memory per variant");
  add_problem_options(*command, options.problem);
  add_compile_options(*command, options.compile, CompileCommandKind::compile);
  command->footer(
      "A variant that fails to compile prints its NVRTC log; the others go on, and the exit code "
      "is 1.\nExample: swr-tune compile --gpu h200 --seq 16384 --head-dim 128 --out kernels/");
  return command;
}

int run_compile_command(const CompileCommandOptions& options) {
  // Every value is checked before anything is compiled or written.
  const Target target = resolve_target(options.problem);
  const CompileSettings settings = parse_compile_options(options.compile);
  const AttentionSpace space = select_space(target, options.problem.config_keys);
  const std::vector<AttentionConfig> configs = variants_to_compile(target, space, settings.limit);

  const CompileOutcome outcome = compile_variants(target, configs, settings);
  if (settings.out_dir) write_kernel_directory(*settings.out_dir, target, outcome);
  if (settings.json) {
    nlohmann::json output = outcome_json(target, outcome);
    if (settings.out_dir) output["out_dir"] = settings.out_dir->string();
    std::cout << output.dump(2) << '\n';
  } else {
    print_compile_summary(target, outcome);
    if (settings.out_dir) {
      std::cout << "wrote " << outcome.succeeded() << " cubins and kernels.json to "
                << settings.out_dir->string() << '\n';
    }
  }
  return outcome.failed > 0 ? 1 : 0;
}

}  // namespace swr::cli
