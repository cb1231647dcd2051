#include <optional>

#include "cli/commands.hpp"
#include "driver/device_context.hpp"
#include "swr/usage_error.hpp"
#include "tuner/attention_tuning_job.hpp"
#include "tuner/gemm_tuning_job.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr::cli {
namespace {

// `swr-tune [tune] --gpu G --seq S ...`: every value and the database path are checked before the
// tuner touches the device, the compiler or the database.
int run_attention_job(const TuneOptions& options) {
  const ProblemOptions& problem = options.problem;
  const TuningOptions& tuning = options.tuning;
  if (tuning.both && problem.causal) {
    throw UsageError(
        "--both and --causal exclude each other: allowed one of them (--both tunes the causal "
        "and the non-causal shape)");
  }
  if (!options.compile.limit.empty() && !tuning.time_budget.empty()) {
    throw UsageError(
        "--limit and --time-budget exclude each other: allowed one of them (at most N new "
        "variants, or no new variant after SEC seconds)");
  }
  AttentionTuningJob job;
  job.tuning.time_budget_seconds = parse_time_budget(tuning);
  job.compile = parse_compile_options(options.compile);
  job.target = resolve_target(problem);
  job.problems = attention_problems_to_tune(job.target.problem, tuning.both);
  job.config_keys = problem.config_keys;
  selected_device_ordinal();  // a bad $SWR_DEVICE is bad input too
  job.tuning.database = writable_database(tuning);
  job.tuning.retune = tuning.retune;
  job.tuning.model_top = parse_model_top(tuning);
  job.plant_fault = tuning.plant_fault;
  return run_attention_tuning_job(job);
}

// `swr-tune --family gemm --gpu G (--m M --n N --k K | --size S | --sweep)`.
int run_gemm_job(const TuneOptions& options) {
  const ProblemOptions& problem = options.problem;
  const TuningOptions& tuning = options.tuning;
  const GemmOptions& gemm = problem.gemm;
  const std::string allowed =
      "--gpu, --m, --n, --k, --size, --sweep, --dtype, --config and the "
      "tuning options";
  reject_attention_options(problem, allowed);
  if (tuning.both) {
    throw UsageError("--both belongs to the attention family: allowed with --family gemm are " +
                     allowed);
  }
  if (!tuning.model_top.empty()) {
    throw UsageError("--model-top ranks attention variants: allowed with --family gemm are " +
                     allowed + " (swr-tune model --family gemm prints the GEMM ranking)");
  }
  if (tuning.plant_fault) {
    throw UsageError(
        "--plant-fault belongs to the attention family: allowed with --family gemm are " + allowed);
  }
  check_gpu_option(problem.gpu);
  const DataType dtype = parse_dtype_option(problem.dtype);
  if (!options.compile.limit.empty() && !tuning.time_budget.empty()) {
    throw UsageError("--limit and --time-budget exclude each other: allowed one of them");
  }
  GemmTuningJob job;
  job.tuning.time_budget_seconds = parse_time_budget(tuning);
  job.compile = parse_compile_options(options.compile);
  std::vector<GemmProblem> problems;
  if (gemm.sweep) {
    if (!gemm.m.empty() || !gemm.n.empty() || !gemm.k.empty() || !gemm.size.empty()) {
      throw UsageError("--sweep runs the paper's sizes: allowed without --m, --n, --k and --size");
    }
    problems = gemm_sweep_problems(dtype);
  } else {
    if (!gemm.sweep_out.empty()) throw UsageError("--sweep-out goes with --sweep");
    if (gemm.m.empty() && gemm.n.empty() && gemm.k.empty() && gemm.size.empty()) {
      throw UsageError(
          "missing GEMM size: allowed --m M --n N --k K, --size S (square), or --sweep");
    }
    problems = {single_gemm_problem(gemm, dtype)};
  }
  const std::vector<GemmConfig> wanted = parse_gemm_config_keys(problem.config_keys);
  selected_device_ordinal();
  job.gpu = resolve_gpu(problem.gpu);
  job.shapes = gemm_tuning_shapes(problems, job.gpu, wanted, gemm.sweep);
  job.tuning.database = writable_database(tuning);
  job.tuning.retune = tuning.retune;
  job.sweep = gemm.sweep;
  job.sweep_out = gemm.sweep_out;
  return run_gemm_tuning_job(job);
}

}  // namespace

void add_tune_options(CLI::App& command, TuneOptions& options) {
  add_problem_options(command, options.problem);
  add_compile_options(command, options.compile, CompileCommandKind::tune);
  add_tuning_options(command, options.tuning);
  add_gemm_sweep_options(command, options.problem.gemm);
}

CLI::App* add_tune_command(CLI::App& app, TuneOptions& options) {
  CLI::App* command = app.add_subcommand(
      "tune",
      "The main job (also what swr-tune does without a subcommand): compile the variant space "
      "for the target and time it on the device");
  add_tune_options(*command, options);
  command->footer(
      "Examples:\n"
      "  swr-tune tune --gpu gb10 --seq 131072 --head-dim 128 --causal\n"
      "  swr-tune tune --family gemm --gpu h200 --m 8192 --n 4096 --k 1024 --dtype bf16\n"
      "  swr-tune tune --family gemm --gpu h200 --sweep");
  return command;
}

// Measures on the named GPU when it is present, compiles only (and says why) when it is not.
int run_tune_command(const TuneOptions& options) {
  if (is_gemm_family(options.problem.gemm)) return run_gemm_job(options);
  return run_attention_job(options);
}

}  // namespace swr::cli
