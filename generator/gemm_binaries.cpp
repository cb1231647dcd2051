#include "generator/gemm_binaries.hpp"

#include "generator/gemm_kernel_source.hpp"
#include "support/parallel_for.hpp"

namespace swr {

std::map<std::string, GemmBinary> compile_gemm_binaries(const NvrtcCompiler& compiler,
                                                        const CubinCache* cache,
                                                        const GemmProblem& problem,
                                                        const std::vector<GemmConfig>& configs,
                                                        const std::string& arch, int threads) {
  std::map<std::string, GemmBinary> binaries;
  for (const GemmConfig& config : configs) {
    const std::string name = gemm_binary_name(problem, config);
    if (binaries.count(name) == 0) binaries[name].source = render_gemm_kernel(problem, config);
  }
  std::vector<GemmBinary*> work;
  for (auto& [name, binary] : binaries) work.push_back(&binary);

  parallel_for(work.size(), threads, [&](std::size_t i) {
    GemmBinary& binary = *work[i];
    const std::string key =
        CubinCache::key_for(binary.source, compiler.options_for(arch), compiler.version(), arch);
    if (cache != nullptr) {
      if (std::optional<CompiledKernel> cached = cache->load(key)) {
        binary.kernel = std::move(*cached);
        return;
      }
    }
    binary.kernel = compiler.compile(binary.source, arch);
    binary.kernel.cache_key = key;
    if (cache != nullptr && binary.kernel.ok) cache->store(key, binary.kernel);
  });
  return binaries;
}

}  // namespace swr
