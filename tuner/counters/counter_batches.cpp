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
  for (std::vector<std::size_t> batch : plan_counter_sessions(launches.size(), max_per_session)) {
    if (!profiler.available()) break;
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
      } catch (const std::exception&) {
        // The ranges could not be told apart: one session each, as before batching.
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

std::size_t counter_session_size_from_environment() {
  const char* value = std::getenv("SWR_COUNTERS_PER_VARIANT");
  return value != nullptr && std::string_view(value) == "1" ? 1 : 0;
}

}  // namespace swr
