#include "tuner/gemm_compilation.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>

#include "generator/gemm_kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/resource_model.hpp"
#include "swr/usage_error.hpp"
#include "tuner/json_forms.hpp"
#include "tuner/progress_display.hpp"
#include "tuner/text_format.hpp"

namespace swr {

// The tuner's display helpers still live in the swr::cli namespace.

GemmSpace select_gemm_space(const GemmTarget& target, const std::vector<GemmConfig>& wanted) {
  if (wanted.empty()) return build_gemm_space(target.problem, target.gpu);
  GemmSpace selected;
  for (const GemmConfig& config : wanted) {
    if (const std::string why = gemm_resource_use(config, target.gpu).does_not_fit; !why.empty()) {
      throw UsageError("config '" + config.key() + "' does not fit " + target.gpu.name + " (" +
                       why + ")");
    }
    selected.configs.push_back(config);
  }
  return selected;
}

std::vector<GemmConfig> gemm_variants_to_compile(const GemmTarget& target, const GemmSpace& space,
                                                 int limit) {
  return first_runnable_configs(space, limit, target.problem.key(), target.gpu.name,
                                "swr-tune space --family gemm");
}

GemmCompileOutcome compile_gemm_variants(const GemmTarget& target,
                                         const std::vector<GemmConfig>& configs,
                                         const CompileSettings& settings) {
  const NvrtcCompiler compiler;
  const CubinCache cache(settings.cache_dir);
  GemmCompileOutcome outcome;
  outcome.cache_dir = cache.directory();
  for (const GemmConfig& config : configs) {
    const std::string name = gemm_binary_name(target.problem, config);
    auto binary = std::find_if(outcome.binaries.begin(), outcome.binaries.end(),
                               [&](const CompiledGemmBinary& b) { return b.name == name; });
    if (binary == outcome.binaries.end()) {
      outcome.binaries.push_back({name, {}, {}});
      binary = std::prev(outcome.binaries.end());
    }
    binary->variants.push_back(config);
  }

  ProgressDisplay display("compiling for " + target.gpu.arch,
                          static_cast<int>(outcome.binaries.size()), settings.json);
  std::map<std::string, GemmBinary> compiled = compile_gemm_binaries(
      compiler, &cache, target.problem, configs, target.gpu.arch, settings.jobs);
  std::size_t name_width = 0;
  for (const CompiledGemmBinary& binary : outcome.binaries)
    name_width = std::max(name_width, binary.name.size());
  for (CompiledGemmBinary& binary : outcome.binaries) {
    binary.binary = std::move(compiled.at(binary.name));
    const CompiledKernel& kernel = binary.binary.kernel;
    if (!kernel.ok) ++outcome.failed;
    if (kernel.from_cache) ++outcome.from_cache;
    display.item_done(compiled_kernel_line(display.next_counter(), binary.name, kernel,
                                           binary.binary.source.dynamic_shared_bytes, name_width));
  }
  display.finish();
  outcome.seconds = display.elapsed_seconds();
  return outcome;
}

void print_compile_summary(const GemmTarget& target, const GemmCompileOutcome& outcome) {
  std::size_t variants = 0;
  std::vector<const CompiledKernel*> kernels;
  for (const CompiledGemmBinary& binary : outcome.binaries) {
    variants += binary.variants.size();
    kernels.push_back(&binary.binary.kernel);
  }
  std::printf(
      "compiled %zu kernel binaries (%zu variants) of %s for %s (%s) in %s: %d ok, %d failed (%d "
      "from cache)\n",
      outcome.binaries.size(), variants, target.problem.key().c_str(), target.gpu.name.c_str(),
      target.gpu.arch.c_str(), format_duration(outcome.seconds).c_str(), outcome.succeeded(),
      outcome.failed, outcome.from_cache);
  print_register_range(kernels, "binary(ies)");
  if (outcome.failed > 0) {
    std::printf("failed:");
    for (const CompiledGemmBinary& binary : outcome.binaries) {
      if (!binary.binary.kernel.ok) std::printf(" %s", binary.name.c_str());
    }
    std::printf("\n");
  }
  std::printf("cubins cached in %s\n", outcome.cache_dir.string().c_str());
  std::fflush(stdout);
}

nlohmann::json outcome_json(const GemmTarget& target, const GemmCompileOutcome& outcome) {
  nlohmann::json results = nlohmann::json::array();
  for (const CompiledGemmBinary& binary : outcome.binaries) {
    const CompiledKernel& kernel = binary.binary.kernel;
    nlohmann::json variants = nlohmann::json::array();
    for (const GemmConfig& config : binary.variants) variants.push_back(config.key());
    nlohmann::json entry = {
        {"binary", binary.name},
        {"variants", std::move(variants)},
        {"ok", kernel.ok},
        {"cubin_bytes", kernel.cubin.size()},
        {"registers", kernel.registers},
        {"spill_bytes", kernel.spill_bytes},
        {"static_shared_bytes", kernel.static_shared_bytes},
        {"dynamic_shared_bytes", binary.binary.source.dynamic_shared_bytes},
        {"threads", binary.binary.source.threads_per_block},
        {"seconds", kernel.compile_seconds},
        {"cached", kernel.from_cache},
        {"wgmma_serialized", ptxas_wgmma_serialization(kernel.log)},
    };
    if (!kernel.ok) entry["log"] = kernel.log;
    results.push_back(std::move(entry));
  }
  nlohmann::json json = compile_outcome_json(target, outcome, std::move(results));
  json["family"] = "gemm";
  return json;
}

}  // namespace swr
