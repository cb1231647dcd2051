#include "tuner/kernel_directory.hpp"

#include <stdexcept>

#include "generator/gemm_kernel_source.hpp"
#include "generator/gemm_swizzle.hpp"
#include "generator/kernel_source.hpp"
#include "generator/problem_json.hpp"
#include "support/files.hpp"
#include "tuner/json_forms.hpp"

namespace swr {

std::string grid_rule(Persistence persistence) {
  // The persistence mode's name is the rule: one CTA per tile, or at most one resident wave.
  return std::string(to_string(persistence));
}

void write_kernel_directory(const std::filesystem::path& directory, const Target& target,
                            const CompileOutcome& outcome) {
  std::filesystem::create_directories(directory);
  nlohmann::json kernels = nlohmann::json::array();
  nlohmann::json failed = nlohmann::json::array();
  for (const CompileResult& result : outcome.results) {
    const std::string key = result.job.config.key();
    if (!result.kernel.ok) {
      failed.push_back(key);
      continue;
    }
    const std::string file = key + ".cubin";
    write_atomically(directory / file, result.kernel.cubin.data(), result.kernel.cubin.size());
    kernels.push_back({
        {"key", key},
        {"config", result.job.config.to_json()},
        {"file", file},
        {"threads", result.source.threads_per_block},
        {"dynamic_shared_bytes", result.source.dynamic_shared_bytes},
        {"registers", result.kernel.registers},
        {"grid", grid_rule(result.job.config.persistence)},
    });
  }
  const nlohmann::json manifest = {
      {"problem", keyed_problem_json(target.problem)},
      {"gpu", target.gpu.name},
      {"arch", target.gpu.arch},
      {"entry", kAttentionEntryName},
      {"kernels", std::move(kernels)},
      {"failed", std::move(failed)},
  };
  const std::string text = manifest.dump(2) + "\n";
  write_atomically(directory / "kernels.json", text.data(), text.size());
}

void write_kernel_directory(const std::filesystem::path& directory, const GemmTarget& target,
                            const GemmCompileOutcome& outcome) {
  std::filesystem::create_directories(directory);
  nlohmann::json kernels = nlohmann::json::array();
  nlohmann::json failed = nlohmann::json::array();
  for (const CompiledGemmBinary& compiled : outcome.binaries) {
    const CompiledKernel& kernel = compiled.binary.kernel;
    if (!kernel.ok) {
      failed.push_back(compiled.name);
      continue;
    }
    const std::string file = compiled.name + ".cubin";
    write_atomically(directory / file, kernel.cubin.data(), kernel.cubin.size());
    const GemmConfig& first = compiled.variants.front();
    nlohmann::json variants = nlohmann::json::array();
    for (const GemmConfig& config : compiled.variants) {
      const SwizzleLaunch swizzle = swizzle_launch(config);
      variants.push_back({{"key", config.key()},
                          {"config", config.to_json()},
                          {"swizzle_axis", swizzle.axis},
                          {"swizzle_group", swizzle.group}});
    }
    kernels.push_back({
        {"binary", compiled.name},
        {"file", file},
        {"threads", compiled.binary.source.threads_per_block},
        {"dynamic_shared_bytes", compiled.binary.source.dynamic_shared_bytes},
        {"registers", kernel.registers},
        // "grid": one CTA per output tile; "static": at most one resident wave, looping over tiles.
        {"grid", std::string(to_string(first.persistence))},
        {"tiles", gemm_tile_grid(target.problem, first).tiles()},
        {"variants", std::move(variants)},
    });
    if (first.path == InstructionPath::wgmma) {
      // Another entry and argument list than the manifest's mma_sync default.
      kernels.back()["entry"] = kGemmWgmmaEntryName;
      kernels.back()["arguments"] = kGemmWgmmaArguments;
    }
  }
  const nlohmann::json manifest = {
      {"family", "gemm"},
      {"problem", keyed_problem_json(target.problem)},
      {"gpu", target.gpu.name},
      {"arch", target.gpu.arch},
      {"entry", kGemmEntryName},
      {"arguments", "a, b, c, m, n, k, swizzle_axis, swizzle_group"},
      {"kernels", std::move(kernels)},
      {"failed", std::move(failed)},
  };
  const std::string text = manifest.dump(2) + "\n";
  write_atomically(directory / "kernels.json", text.data(), text.size());
}

}  // namespace swr
