#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "driver/device_context.hpp"
#include "generator/attention_backward/attention_backward_family.hpp"
#include "swr/usage_error.hpp"
#include "tuner/attention_tuning_job.hpp"
#include "tuner/family_compilation.hpp"
#include "tuner/gemm_tuning_job.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/plan_file.hpp"
#include "tuner/tuning_job.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr::cli {
namespace {

// The options every tune takes, whatever it tunes; checked before the problem is resolved.
TuningJob common_job(const TuneOptions& options) {
  const TuningOptions& tuning = options.tuning;
  if (!options.compile.limit.empty() && !tuning.time_budget.empty()) {
    throw UsageError(
        "--limit and --time-budget exclude each other: allowed one of them (at most N new "
        "variants, or no new variant after SEC seconds)");
  }
  TuningJob job;
  job.tuning.time_budget_seconds = parse_time_budget(tuning);
  job.compile = parse_compile_options(options.compile);
  if (!tuning.devices.empty()) job.devices = parse_device_spec(tuning.devices);
  job.wait_for_devices = !tuning.no_wait;
  if (!tuning.shard.empty()) job.shard = parse_shard(tuning.shard);
  job.tuning.retune = tuning.retune;
  job.tuning.model_top = parse_model_top(tuning);
  parse_counters_options(tuning, job.tuning);
  job.plant_fault = tuning.plant_fault;
  return job;
}

// `swr-tune [tune] --gpu G --seq S ...`: every value and the database path are checked before the
// tuner touches the device, the compiler or the database.
TuningJob attention_job(const TuneOptions& options) {
  const ProblemOptions& problem = options.problem;
  const TuningOptions& tuning = options.tuning;
  if (tuning.both && problem.causal) {
    throw UsageError(
        "--both and --causal exclude each other: allowed one of them (--both tunes the causal "
        "and the non-causal shape)");
  }
  TuningJob job = common_job(options);
  const Target target = resolve_target(problem);
  job.gpu = target.gpu;
  for (const AttentionProblem& shape : attention_problems_to_tune(target.problem, tuning.both)) {
    // A --config the target cannot run is bad input now, before the database is located.
    if (!problem.config_keys.empty()) select_space({shape, target.gpu}, problem.config_keys);
    job.attention.push_back({shape, problem.config_keys});
  }
  return job;
}

// `swr-tune --family attention-backward --gpu G --seq S ...`: the backward of the attention
// problem the options name (the causal and non-causal ones with --both).
TuningJob attention_backward_job(const TuneOptions& options) {
  const ProblemOptions& problem = options.problem;
  const TuningOptions& tuning = options.tuning;
  if (tuning.both && problem.causal) {
    throw UsageError(
        "--both and --causal exclude each other: allowed one of them (--both tunes the causal "
        "and the non-causal shape)");
  }
  if (tuning.plant_fault) {
    throw UsageError(
        "--plant-fault plants an attention forward variant: allowed with --family "
        "attention-backward are the attention problem options and the tuning options");
  }
  TuningJob job = common_job(options);
  const AttentionBackwardProblem asked = resolve_backward_problem(problem);
  job.gpu = resolve_gpu(problem.gpu);
  for (const AttentionProblem& shape : attention_problems_to_tune(asked.shape, tuning.both)) {
    const AttentionBackwardProblem backward{shape};
    // A --config the target cannot run is bad input now, before the database is located.
    select_family_space<AttentionBackwardFamily>(backward, job.gpu, problem.config_keys);
    job.attention_backward.push_back({backward, problem.config_keys});
  }
  return job;
}

// `swr-tune --family gemm --gpu G (--m M --n N --k K | --size S | --sweep)`.
TuningJob gemm_job(const TuneOptions& options) {
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
  TuningJob job = common_job(options);
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
  job.gpu = resolve_gpu(problem.gpu);
  for (const GemmProblem& shape : problems) job.gemm.push_back({shape, wanted});
  job.gemm_sweep = gemm.sweep;
  job.sweep_out = gemm.sweep_out;
  return job;
}

// `swr-tune [tune] --gpu G --plan FILE`: the plan names the problems, of both families.
TuningJob plan_job(const TuneOptions& options) {
  const ProblemOptions& problem = options.problem;
  const ProblemOptions defaults;
  std::vector<std::string> given = given_attention_options(problem);
  const std::pair<bool, const char*> other_options[] = {
      {problem.dtype != defaults.dtype, "--dtype"},
      {!problem.config_keys.empty(), "--config"},
      {options.tuning.both, "--both"},
      {problem.gemm.family != defaults.gemm.family, "--family"},
      {!problem.gemm.m.empty(), "--m"},
      {!problem.gemm.n.empty(), "--n"},
      {!problem.gemm.k.empty(), "--k"},
      {!problem.gemm.size.empty(), "--size"},
      {problem.gemm.sweep, "--sweep"},
      {!problem.gemm.sweep_out.empty(), "--sweep-out"},
  };
  for (const auto& [is_given, option] : other_options) {
    if (is_given) given.push_back(option);
  }
  if (!given.empty()) {
    throw UsageError(given.front() +
                     " and --plan exclude each other: the plan names the problems (allowed "
                     "with --plan: --gpu, --devices, --no-wait, --shard, --model-top and the "
                     "options of the run such as --db, --limit, --time-budget, --retune, --jobs)");
  }
  check_gpu_option(problem.gpu);
  TuningJob job = common_job(options);
  const TuningPlanFile plan = read_plan_file(options.tuning.plan);
  if (job.tuning.model_top && !plan.gemm.empty()) {
    throw UsageError("--model-top ranks attention variants and " + options.tuning.plan + " lists " +
                     std::to_string(plan.gemm.size()) +
                     " GEMM problems: allowed with --model-top are plans of attention problems "
                     "only (swr-tune model --family gemm prints the GEMM ranking)");
  }
  job.attention = plan.attention;
  job.gemm = plan.gemm;
  job.gpu = resolve_gpu(problem.gpu);
  std::cout << "plan " << options.tuning.plan << ": " << plan.attention.size() << " attention and "
            << plan.gemm.size() << " GEMM problems"
            << (plan.repeated > 0
                    ? " (" + std::to_string(plan.repeated) + " named more than once, tuned once)"
                    : std::string())
            << "\n";
  return job;
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
      "  swr-tune tune --family gemm --gpu h200 --sweep\n"
      "  swr-tune tune --family attention-backward --gpu h200 --seq 16384 --heads 16 "
      "--head-dim 128 --causal\n"
      "  swr-tune tune --gpu h200 --plan plan.json --devices all\n"
      "  swr-tune tune --gpu h200 --plan plan.json --shard $SLURM_ARRAY_TASK_ID/"
      "$SLURM_ARRAY_TASK_COUNT --db shard-$SLURM_ARRAY_TASK_ID.db");
  return command;
}

// Measures on the named GPU when it is present, compiles only (and says why) when it is not.
int run_tune_command(const TuneOptions& options) {
  TuningJob job = !options.tuning.plan.empty()           ? plan_job(options)
                  : is_gemm_family(options.problem.gemm) ? gemm_job(options)
                  : is_attention_backward_family(options.problem.gemm)
                      ? attention_backward_job(options)
                      : attention_job(options);
  selected_device_ordinal();  // a bad $SWR_DEVICE is bad input too
  job.tuning.database = writable_database(options.tuning);
  return run_tuning_job(job);
}

}  // namespace swr::cli
