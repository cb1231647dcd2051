#include "cli/tune_command.hpp"

#include "cli/gemm_tuning_job.hpp"
#include "cli/tuning_job.hpp"

namespace swr::cli {

void add_tune_options(CLI::App& command, TuneOptions& options) {
  add_problem_options(command, options.problem);
  add_compile_options(command, options.compile, CompileCommandKind::tune);
  add_tuning_options(command, options.tuning);
  add_gemm_options(command, options.gemm);
}

CLI::App* add_tune_command(CLI::App& app, TuneOptions& options) {
  CLI::App* command = app.add_subcommand(
      "tune",
      "The main job (also what swr-tune does without a subcommand): compile the variant space "
      "for the target and time it on the device");
  add_tune_options(*command, options);
  command->footer("Example: swr-tune tune --gpu gb10 --seq 131072 --head-dim 128 --causal");
  return command;
}

// The tuner itself (cli/tuning_job.cpp, gemm_tuning_job.cpp): measures on the named GPU when
// it is present, compiles only (and says why) when it is not.
int run_tune_command(const TuneOptions& options) {
  if (is_gemm_family(options.gemm)) {
    return run_gemm_tuning_job(options.problem, options.compile, options.tuning, options.gemm);
  }
  return run_tuning_job(options.problem, options.compile, options.tuning);
}

}  // namespace swr::cli
