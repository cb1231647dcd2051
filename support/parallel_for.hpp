// The one thread fan-out: body(i) for every i in [0, count), on up to `threads` threads.
// Indexes are handed out one at a time, so uneven work balances itself. The calling thread is one
// of the workers. The first exception a body throws stops the handing out and is rethrown here
// once every thread has finished its current index.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace swr {

// One thread per hardware thread the system reports (at least one).
inline unsigned hardware_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

// `threads` <= 0 means hardware_threads().
template <typename Body>
void parallel_for(std::size_t count, int threads, Body&& body) {
  if (count == 0) return;
  const std::size_t workers = std::min<std::size_t>(
      count, threads > 0 ? static_cast<std::size_t>(threads) : hardware_threads());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::exception_ptr error;  // guarded by mutex: the first one wins
  const auto work = [&] {
    for (std::size_t i = next++; i < count && !failed; i = next++) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace swr
