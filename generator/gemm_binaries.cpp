#include "generator/gemm_binaries.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "generator/gemm_kernel_source.hpp"

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

  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr error;  // guarded by mutex: the first one wins
  const auto compile_next = [&] {
    for (std::size_t i = next++; i < work.size(); i = next++) {
      try {
        GemmBinary& binary = *work[i];
        const std::string key = CubinCache::key_for(binary.source, compiler.options_for(arch),
                                                    compiler.version(), arch);
        if (cache != nullptr) {
          if (std::optional<CompiledKernel> cached = cache->load(key)) {
            binary.kernel = std::move(*cached);
            continue;
          }
        }
        binary.kernel = compiler.compile(binary.source, arch);
        binary.kernel.cache_key = key;
        if (cache != nullptr && binary.kernel.ok) cache->store(key, binary.kernel);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  const std::size_t workers = std::min<std::size_t>(
      work.size(), threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t i = 0; i < workers; ++i) pool.emplace_back(compile_next);
  for (std::thread& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
  return binaries;
}

}  // namespace swr
