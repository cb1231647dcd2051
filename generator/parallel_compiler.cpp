#include "generator/parallel_compiler.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "generator/gemm_kernel_source.hpp"
#include "support/parallel_for.hpp"

namespace swr {
namespace {

// The cached kernel of `source` for `arch`, else a fresh compile (stored in the cache if it
// compiled).
CompiledKernel load_or_compile(const NvrtcCompiler& compiler, const CubinCache* cache,
                               const KernelSource& source, const std::string& arch) {
  const std::string key =
      CubinCache::key_for(source, compiler.options_for(arch), compiler.version(), arch);
  if (cache != nullptr) {
    if (std::optional<CompiledKernel> cached = cache->load(key)) return std::move(*cached);
  }
  CompiledKernel kernel = compiler.compile(source, arch);
  kernel.cache_key = key;
  // Failures are not cached: the log is shown once, and a fixed template recompiles anyway
  // because the key covers the headers.
  if (cache != nullptr && kernel.ok) cache->store(key, kernel);
  return kernel;
}

}  // namespace

void compile_sources_in_parallel(
    const NvrtcCompiler& compiler, const CubinCache* cache,
    const std::vector<KernelSource>& sources, const std::string& arch, int threads,
    const std::function<void(std::size_t, CompiledKernel&&)>& on_result) {
  if (sources.empty()) return;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::pair<std::size_t, CompiledKernel>> finished;  // guarded by mutex
  bool compiling = true;                                        // guarded by mutex
  std::exception_ptr worker_error;                              // guarded by mutex
  std::atomic<bool> stop{false};

  // The fan-out runs beside this thread, which hands the results to on_result as they complete.
  std::thread compiling_thread([&] {
    try {
      parallel_for(sources.size(), threads, [&](std::size_t index) {
        if (stop) return;
        CompiledKernel kernel = load_or_compile(compiler, cache, sources[index], arch);
        std::lock_guard lock(mutex);
        finished.emplace_back(index, std::move(kernel));
        ready.notify_one();
      });
    } catch (...) {
      std::lock_guard lock(mutex);
      worker_error = std::current_exception();
    }
    std::lock_guard lock(mutex);
    compiling = false;
    ready.notify_one();
  });

  // If on_result throws, the workers stop taking jobs; the error is rethrown once they have all
  // finished.
  std::exception_ptr callback_error;
  while (true) {
    std::unique_lock lock(mutex);
    ready.wait(lock, [&] { return !finished.empty() || !compiling; });
    if (finished.empty()) break;
    std::pair<std::size_t, CompiledKernel> result = std::move(finished.front());
    finished.pop_front();
    lock.unlock();
    if (callback_error) continue;
    try {
      on_result(result.first, std::move(result.second));
    } catch (...) {
      callback_error = std::current_exception();
      stop = true;
    }
  }
  compiling_thread.join();
  if (callback_error) std::rethrow_exception(callback_error);
  if (worker_error) std::rethrow_exception(worker_error);
}

void compile_in_parallel(const NvrtcCompiler& compiler, const CubinCache* cache,
                         const std::vector<CompileJob>& jobs, int threads,
                         const std::function<void(const CompileResult&)>& on_result) {
  // Rendering is cheap; the jobs of one call share an arch in practice, but each keeps its own.
  std::vector<KernelSource> sources;
  sources.reserve(jobs.size());
  for (const CompileJob& job : jobs)
    sources.push_back(render_attention_kernel(job.problem, job.config));
  std::map<std::string, std::vector<std::size_t>> by_arch;
  for (std::size_t i = 0; i < jobs.size(); ++i) by_arch[jobs[i].arch].push_back(i);
  // Not a structured binding: clang 14 (the fuzz build) cannot capture one in the lambda below.
  for (const auto& entry : by_arch) {
    const std::string& arch = entry.first;
    const std::vector<std::size_t>& indices = entry.second;
    std::vector<KernelSource> of_arch;
    for (std::size_t i : indices) of_arch.push_back(sources[i]);
    compile_sources_in_parallel(
        compiler, cache, of_arch, arch, threads, [&](std::size_t index, CompiledKernel&& kernel) {
          const std::size_t job = indices[index];
          on_result(CompileResult{jobs[job], sources[job], std::move(kernel)});
        });
  }
}

std::vector<CompiledKernel> compile_sources(const NvrtcCompiler& compiler, const CubinCache* cache,
                                            const std::vector<KernelSource>& sources,
                                            const std::string& arch, int threads) {
  std::vector<CompiledKernel> kernels(sources.size());
  parallel_for(sources.size(), threads, [&](std::size_t i) {
    kernels[i] = load_or_compile(compiler, cache, sources[i], arch);
  });
  return kernels;
}

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
    work[i]->kernel = load_or_compile(compiler, cache, work[i]->source, arch);
  });
  return binaries;
}

}  // namespace swr
