#include <iostream>

#include "cli/commands.hpp"
#include "generator/attention_backward/attention_backward_family.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/problem_json.hpp"
#include "swr/usage_error.hpp"
#include "tuner/family_compilation.hpp"
#include "tuner/gemm_compilation.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/kernel_directory.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr::cli {
namespace {

// --out, then the outcome as JSON or as a summary (the per-variant lines came while compiling), for
// either family. 0 when every kernel compiled, 1 when any failed.
template <class FamilyTarget, class Outcome>
int report_compiled(const FamilyTarget& target, const Outcome& outcome,
                    const CompileSettings& settings) {
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

int run_gemm_compile(const CompileCommandOptions& options) {
  // Every value is checked before anything is compiled or written.
  const GemmSelection selection = resolve_gemm_selection(
      options.problem,
      "--gpu, --m, --n, --k, --size, --dtype, --config, --jobs, --cache-dir, --limit, --out and "
      "--json");
  const GemmTarget& target = selection.target;
  const CompileSettings settings = parse_compile_options(options.compile);
  const GemmSpace space = select_gemm_space(target, selection.wanted);
  const std::vector<GemmConfig> configs = gemm_variants_to_compile(target, space, settings.limit);

  return report_compiled(target, compile_gemm_variants(target, configs, settings), settings);
}

// The attention backward: the per-variant lines while compiling, then the summary, or the JSON
// form of every variant. Its modules ship through `swr-tune export` (the manifest says their three
// entries and their order), not through --out's kernel directories.
int run_backward_compile(const CompileCommandOptions& options) {
  const AttentionBackwardProblem problem = resolve_backward_problem(options.problem);
  const GpuProfile gpu = resolve_gpu(options.problem.gpu);
  const CompileSettings settings = parse_compile_options(options.compile);
  if (settings.out_dir) {
    throw UsageError(
        "--out writes kernel directories of the attention and GEMM families: allowed "
        "with --family attention-backward are the other options (its kernels ship "
        "through `swr-tune export`)");
  }
  const AttentionBackwardSpace space =
      select_family_space<AttentionBackwardFamily>(problem, gpu, options.problem.config_keys);
  const std::vector<AttentionBackwardConfig> configs = first_runnable_configs(
      space, settings.limit, problem.key(), gpu.name, "swr-tune space --family attention-backward");
  const FamilyCompileOutcome<AttentionBackwardFamily> outcome =
      compile_family_variants<AttentionBackwardFamily>(problem, gpu, configs, settings);
  if (settings.json) {
    nlohmann::json variants = nlohmann::json::array();
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const CompiledKernel& kernel = outcome.kernels[i];
      variants.push_back({{"key", configs[i].key()},
                          {"ok", kernel.ok},
                          {"entries", outcome.sources[i].launch_sequence},
                          {"registers", kernel.registers},
                          {"spill_bytes", kernel.spill_bytes},
                          {"dynamic_shared_bytes", outcome.sources[i].dynamic_shared_bytes},
                          {"cubin_bytes", kernel.cubin.size()},
                          {"from_cache", kernel.from_cache},
                          {"wgmma_serialized", ptxas_wgmma_serialization(kernel.log)},
                          {"log", kernel.ok ? std::string() : kernel.log}});
    }
    std::cout << nlohmann::json{{"family", kAttentionBackwardFamilyName},
                                {"problem", keyed_problem_json(problem)},
                                {"gpu", gpu.name},
                                {"arch", gpu.arch},
                                {"seconds", outcome.seconds},
                                {"failed", outcome.failed},
                                {"from_cache", outcome.from_cache},
                                {"cache_dir", outcome.cache_dir.string()},
                                {"variants", std::move(variants)}}
                     .dump(2)
              << '\n';
  } else {
    print_family_compile_summary<AttentionBackwardFamily>(problem, gpu, outcome);
  }
  return outcome.failed > 0 ? 1 : 0;
}

}  // namespace

CLI::App* add_compile_command(CLI::App& app, CompileCommandOptions& options) {
  CLI::App* command = app.add_subcommand(
      "compile",
      "Compile the pruned space for the target GPU with NVRTC (cached), reporting cubin size, "
      "registers, spills and shared memory per variant (per kernel binary for GEMM)");
  add_problem_options(*command, options.problem);
  add_compile_options(*command, options.compile, CompileCommandKind::compile);
  command->footer(
      "A variant that fails to compile prints its NVRTC log; the others go on, and the exit code "
      "is 1.\n"
      "GEMM configs that differ only in their swizzle share one kernel binary (the swizzle is a "
      "launch argument, listed per variant in kernels.json).\n"
      "Examples:\n"
      "  swr-tune compile --gpu h200 --seq 16384 --head-dim 128 --out kernels/\n"
      "  swr-tune compile --family gemm --gpu h200 --size 4096 --out gemm-kernels/\n"
      "  swr-tune compile --family attention-backward --gpu gb10 --seq 8192 --head-dim 128");
  return command;
}

int run_compile_command(const CompileCommandOptions& options) {
  if (is_gemm_family(options.problem.gemm)) return run_gemm_compile(options);
  if (is_attention_backward_family(options.problem.gemm)) return run_backward_compile(options);
  // Every value is checked before anything is compiled or written.
  const Target target = resolve_target(options.problem);
  const CompileSettings settings = parse_compile_options(options.compile);
  const AttentionSpace space = select_space(target, options.problem.config_keys);
  const std::vector<AttentionConfig> configs = variants_to_compile(target, space, settings.limit);

  return report_compiled(target, compile_variants(target, configs, settings), settings);
}

}  // namespace swr::cli
