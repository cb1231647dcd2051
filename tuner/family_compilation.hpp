// Compiling and listing the space of a kernel family whose variants are one binary each
// (generator/kernel_family.hpp), written once against its descriptor: the space of a problem on a
// GPU (restricted to chosen config keys), the configs of it to compile, compiling them through
// the cubin cache with one line per variant and a summary, and the shapes a tuning session of the
// family measures. The attention forward's own functions (variant_compilation.hpp) came first and
// say the same for it.
#pragma once

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "generator/cubin_cache.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/parallel_compiler.hpp"
#include "swr/usage_error.hpp"
#include "tuner/plan_file.hpp"
#include "tuner/progress_display.hpp"
#include "tuner/tuning/tuning_plan.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

// The pruned space of `problem` on `gpu`, or exactly `config_keys` when given (UsageError for a
// key that does not parse or a config the target cannot run, naming why).
template <class Family>
SpaceOf<typename Family::Config> select_family_space(const typename Family::Problem& problem,
                                                     const GpuProfile& gpu,
                                                     const std::vector<std::string>& config_keys) {
  using Config = typename Family::Config;
  problem.validate();
  if (config_keys.empty()) return Family::space(problem, gpu);
  SpaceOf<Config> space;
  for (const std::string& key : config_keys) {
    const std::optional<Config> config = Config::from_key(key);
    if (!config) {
      throw UsageError("--config '" + key + "' is not a " + Family::kName +
                       " config key (allowed: the keys `swr-tune space --family " + Family::kName +
                       "` lists)");
    }
    const std::string why = Family::resources(problem, *config, gpu).does_not_fit;
    if (!why.empty()) {
      throw UsageError("--config " + key + " does not fit " + gpu.name + ": " + why);
    }
    space.configs.push_back(*config);
  }
  return space;
}

template <class Family>
struct FamilyCompileOutcome {
  std::vector<KernelSource> sources;    // in the order of the configs given
  std::vector<CompiledKernel> kernels;  // likewise
  int failed = 0;
  int from_cache = 0;
  double seconds = 0;
  std::filesystem::path cache_dir;

  int succeeded() const { return static_cast<int>(kernels.size()) - failed; }
};

// One line per variant as it compiles (compiled_kernel_line), unless settings.json. Throws
// std::runtime_error when NVRTC cannot be loaded.
template <class Family>
FamilyCompileOutcome<Family> compile_family_variants(
    const typename Family::Problem& problem, const GpuProfile& gpu,
    const std::vector<typename Family::Config>& configs, const CompileSettings& settings) {
  const NvrtcCompiler compiler;
  const CubinCache cache(settings.cache_dir);
  FamilyCompileOutcome<Family> outcome;
  outcome.cache_dir = cache.directory();
  std::size_t key_width = 0;
  for (const auto& config : configs) {
    outcome.sources.push_back(Family::render(problem, config));
    key_width = std::max(key_width, config.key().size());
  }
  outcome.kernels.resize(configs.size());
  ProgressDisplay display("compiling for " + gpu.arch, static_cast<int>(configs.size()),
                          settings.json);
  compile_sources_in_parallel(compiler, &cache, outcome.sources, gpu.arch, settings.jobs,
                              [&](std::size_t index, CompiledKernel&& kernel) {
                                if (!kernel.ok) ++outcome.failed;
                                if (kernel.from_cache) ++outcome.from_cache;
                                display.item_done(compiled_kernel_line(
                                    display.next_counter(), configs[index].key(), kernel,
                                    outcome.sources[index].dynamic_shared_bytes, key_width));
                                outcome.kernels[index] = std::move(kernel);
                              });
  display.finish();
  outcome.seconds = display.elapsed_seconds();
  return outcome;
}

// "compiled 37 <family> variants of <problem> for h200 (sm_90a) in 41s: 37 ok, 0 failed (0 from
// cache)" and the register range, on stdout.
template <class Family>
void print_family_compile_summary(const typename Family::Problem& problem, const GpuProfile& gpu,
                                  const FamilyCompileOutcome<Family>& outcome) {
  std::printf(
      "compiled %zu %s variants of %s for %s (%s) in %.1f s: %d ok, %d failed (%d from "
      "cache)\n",
      outcome.kernels.size(), Family::kName, problem.key().c_str(), gpu.name.c_str(),
      gpu.arch.c_str(), outcome.seconds, outcome.succeeded(), outcome.failed, outcome.from_cache);
  std::vector<const CompiledKernel*> kernels;
  for (const CompiledKernel& kernel : outcome.kernels) kernels.push_back(&kernel);
  print_register_range(kernels, "variants");
  std::printf("cubin cache: %s\n", outcome.cache_dir.string().c_str());
  std::fflush(stdout);
}

// The shapes a session of the family measures: each planned problem with its runnable configs
// (or its chosen ones: UsageError for one that does not fit, before anything is compiled).
template <class Family>
std::vector<TuningShapeOf<typename Family::Problem, typename Family::Config>> family_tuning_shapes(
    const std::vector<PlannedOf<typename Family::Problem>>& planned, const GpuProfile& gpu,
    int limit = 0) {
  std::vector<TuningShapeOf<typename Family::Problem, typename Family::Config>> shapes;
  for (const auto& item : planned) {
    const auto space = select_family_space<Family>(item.problem, gpu, item.config_keys);
    shapes.push_back({item.problem, first_runnable_configs(
                                        space, limit, item.problem.key(), gpu.name,
                                        std::string("swr-tune space --family ") + Family::kName)});
  }
  return shapes;
}

// Without the named GPU: compile what a tune would measure and say why nothing is timed. 1 when a
// variant failed to compile, else 0.
template <class Family>
int compile_family_only(const GpuProfile& gpu,
                        const std::vector<PlannedOf<typename Family::Problem>>& planned,
                        const CompileSettings& settings) {
  int failed = 0;
  for (const auto& shape : family_tuning_shapes<Family>(planned, gpu, settings.limit)) {
    std::cout << "tuning " << Family::kName << " " << shape.problem.key() << " on " << gpu.name
              << " (" << gpu.arch << "): " << shape.configs.size() << " variants to compile\n"
              << std::flush;
    const FamilyCompileOutcome<Family> outcome =
        compile_family_variants<Family>(shape.problem, gpu, shape.configs, settings);
    print_family_compile_summary<Family>(shape.problem, gpu, outcome);
    failed += outcome.failed;
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace swr
