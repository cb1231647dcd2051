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

CompileResult compile_one(const NvrtcCompiler& compiler, const CubinCache* cache,
                          const CompileJob& job) {
  CompileResult result{job, render_attention_kernel(job.problem, job.config), {}};
  result.kernel = load_or_compile(compiler, cache, result.source, job.arch);
  return result;
}

}  // namespace

void compile_in_parallel(const NvrtcCompiler& compiler, const CubinCache* cache,
                         const std::vector<CompileJob>& jobs, int threads,
                         const std::function<void(const CompileResult&)>& on_result) {
  if (jobs.empty()) return;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<CompileResult> finished;  // guarded by mutex
  bool compiling = true;               // guarded by mutex
  std::exception_ptr worker_error;     // guarded by mutex
  std::atomic<bool> stop{false};

  // The fan-out runs beside this thread, which hands the results to on_result as they complete.
  std::thread compiling_thread([&] {
    try {
      parallel_for(jobs.size(), threads, [&](std::size_t index) {
        if (stop) return;
        CompileResult result = compile_one(compiler, cache, jobs[index]);
        std::lock_guard lock(mutex);
        finished.push_back(std::move(result));
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
    CompileResult result = std::move(finished.front());
    finished.pop_front();
    lock.unlock();
    if (callback_error) continue;
    try {
      on_result(result);
    } catch (...) {
      callback_error = std::current_exception();
      stop = true;
    }
  }
  compiling_thread.join();
  if (callback_error) std::rethrow_exception(callback_error);
  if (worker_error) std::rethrow_exception(worker_error);
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
