#include "tuner/tuning/timing_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace swr {

TimingStatistics summarize_timings(std::vector<double> times_ms) {
  if (times_ms.empty()) throw std::invalid_argument("no timed runs to summarize");
  std::sort(times_ms.begin(), times_ms.end());
  const std::size_t count = times_ms.size();
  TimingStatistics statistics;
  statistics.runs = static_cast<int>(count);
  statistics.min_ms = times_ms.front();
  statistics.median_ms =
      count % 2 == 1 ? times_ms[count / 2] : (times_ms[count / 2 - 1] + times_ms[count / 2]) / 2.0;
  const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(count)));
  statistics.p95_ms = times_ms[std::clamp<std::size_t>(rank, 1, count) - 1];
  return statistics;
}

bool needs_another_timed_run(int runs_so_far, double total_ms_so_far) {
  if (runs_so_far < kMinimumTimedRuns) return true;
  if (runs_so_far >= kMaximumTimedRuns) return false;
  return total_ms_so_far < kTimedRunsTargetMs;
}

}  // namespace swr
