#include "tuner/counters/counter_batches.hpp"

#include "driver/cuda_driver.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace swr {

std::vector<std::vector<std::size_t>> plan_counter_sessions(std::size_t count,
                                                            std::size_t max_per_session) {
  std::vector<std::vector<std::size_t>> sessions;
  if (count == 0) return sessions;
  const std::size_t most = std::max<std::size_t>(max_per_session, 1);
  const std::size_t session_count = (count + most - 1) / most;
  std::size_t next = 0;
  for (std::size_t session = 0; session < session_count; ++session) {
    // The first `count % session_count` sessions take one more.
    const std::size_t size = count / session_count + (session < count % session_count ? 1 : 0);
    std::vector<std::size_t>& positions = sessions.emplace_back();
    for (std::size_t i = 0; i < size; ++i) positions.push_back(next++);
  }
  return sessions;
}

namespace {

void one_by_one(BatchProfiler& profiler, CUstream stream, const std::vector<BatchLaunch>& launches,
                const std::vector<std::size_t>& positions, BatchedCounters& result) {
  for (std::size_t position : positions) {
    if (!profiler.available()) return;
    ++result.sessions;
    try {
      result.counters[position] = profiler.profile_one(stream, launches[position]);
    } catch (const DriverError& error) {
      if (is_context_fatal(error.result())) throw;  // the worker process ends with it
      result.failed[position] = error.what();
    } catch (const std::exception& error) {
      result.failed[position] = error.what();
    }
  }
}

}  // namespace

BatchedCounters collect_counters_in_batches(BatchProfiler& profiler, CUstream stream,
                                            const std::vector<BatchLaunch>& launches,
                                            std::size_t max_per_session) {
  BatchedCounters result;
  result.counters.resize(launches.size());
  result.failed.resize(launches.size());
  if (max_per_session == 0) max_per_session = profiler.max_launches_per_session();
  // Batches still to count, the next one last (a batch split in halves counts its first half next).
  std::vector<std::vector<std::size_t>> pending =
      plan_counter_sessions(launches.size(), max_per_session);
  std::reverse(pending.begin(), pending.end());
  while (!pending.empty() && profiler.available()) {
    std::vector<std::size_t> batch = std::move(pending.back());
    pending.pop_back();
    if (batch.size() == 1) {
      one_by_one(profiler, stream, launches, batch, result);
      continue;
    }
    while (!batch.empty() && profiler.available()) {
      std::vector<BatchLaunch> session;
      for (std::size_t position : batch) session.push_back(launches[position]);
      ++result.sessions;
      try {
        const std::vector<L2Counters> counters = profiler.profile_batch(stream, session);
        for (std::size_t i = 0; i < batch.size() && i < counters.size(); ++i) {
          result.counters[batch[i]] = counters[i];
        }
        break;
      } catch (const BatchLaunchFailed& failure) {
        // The variant's fault: it has no counters, the others run again without it.
        const std::size_t culprit = std::min(failure.index(), batch.size() - 1);
        result.failed[batch[culprit]] = failure.what();
        batch.erase(batch.begin() + static_cast<std::ptrdiff_t>(culprit));
      } catch (const DriverError&) {
        throw;
      } catch (const RangesDropped& dropped) {
        // More kernels than the session had room for: each half in a session of its own.
        if (result.fallback.empty()) result.fallback = dropped.what();
        const auto middle = batch.begin() + static_cast<std::ptrdiff_t>(batch.size() / 2);
        pending.emplace_back(middle, batch.end());
        pending.emplace_back(batch.begin(), middle);
        break;
      } catch (const std::exception& error) {
        // The ranges could not be told apart: one session each, as before batching.
        if (result.fallback.empty()) result.fallback = error.what();
        one_by_one(profiler, stream, launches, batch, result);
        break;
      }
    }
  }
  return result;
}

std::vector<L2Counters> CuptiBatchProfiler::profile_batch(
    CUstream stream, const std::vector<BatchLaunch>& launches) {
  return session_.measure_batch(stream, launches);
}

L2Counters CuptiBatchProfiler::profile_one(CUstream stream, const BatchLaunch& launch) {
  return session_.measure(stream, launch.launch, launch.kernel_name);
}

bool counted_in_a_batch(const std::vector<double>& times_ms) {
  if (times_ms.empty()) return false;
  std::vector<double> sorted = times_ms;
  const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), middle, sorted.end());
  return *middle <= kBatchedCountersUpToMs;
}

std::size_t counter_session_size_from_environment() {
  const char* value = std::getenv("SWR_COUNTERS_PER_VARIANT");
  return value != nullptr && std::string_view(value) == "1" ? 1 : 0;
}

}  // namespace swr
