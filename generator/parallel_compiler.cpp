#include "generator/parallel_compiler.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

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
  std::size_t workers = threads > 0 ? static_cast<std::size_t>(threads)
                                    : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min(workers, jobs.size());

  std::mutex mutex;
  std::condition_variable ready;
  std::deque<CompileResult> finished;  // guarded by mutex
  std::size_t running = workers;       // guarded by mutex
  std::exception_ptr worker_error;     // guarded by mutex: the first one wins
  std::atomic<std::size_t> next_job{0};
  std::atomic<bool> stop{false};

  auto work = [&] {
    while (!stop.load()) {
      const std::size_t index = next_job.fetch_add(1);
      if (index >= jobs.size()) break;
      try {
        CompileResult result = compile_one(compiler, cache, jobs[index]);
        std::lock_guard lock(mutex);
        finished.push_back(std::move(result));
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!worker_error) worker_error = std::current_exception();
        stop = true;
      }
      ready.notify_one();
    }
    std::lock_guard lock(mutex);
    --running;
    ready.notify_one();
  };

  std::vector<std::thread> pool;
  pool.reserve(workers);
  for (std::size_t i = 0; i < workers; ++i) pool.emplace_back(work);

  // Results reach on_result on this thread as they complete. If on_result throws, the workers
  // stop taking jobs; the error is rethrown once they have all finished.
  std::exception_ptr callback_error;
  while (true) {
    std::unique_lock lock(mutex);
    ready.wait(lock, [&] { return !finished.empty() || running == 0; });
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
  for (std::thread& thread : pool) thread.join();
  if (callback_error) std::rethrow_exception(callback_error);
  if (worker_error) std::rethrow_exception(worker_error);
}

}  // namespace swr
