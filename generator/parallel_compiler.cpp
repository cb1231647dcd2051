#include "generator/parallel_compiler.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "support/parallel_for.hpp"

namespace swr {
namespace {

CompileResult compile_one(const NvrtcCompiler& compiler, const CubinCache* cache,
                          const CompileJob& job) {
  CompileResult result{job, render_attention_kernel(job.problem, job.config), {}};
  const std::string key = CubinCache::key_for(result.source, compiler.options_for(job.arch),
                                              compiler.version(), job.arch);
  if (cache != nullptr) {
    if (std::optional<CompiledKernel> cached = cache->load(key)) {
      result.kernel = std::move(*cached);
      return result;
    }
  }
  result.kernel = compiler.compile(result.source, job.arch);
  result.kernel.cache_key = key;
  // Failures are not cached: the log is shown once, and a fixed template recompiles anyway
  // because the key covers the headers.
  if (cache != nullptr && result.kernel.ok) cache->store(key, result.kernel);
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

}  // namespace swr
