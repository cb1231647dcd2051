// Summary of repeated kernel timings, and the rule that decides how many timed runs a variant gets.
#pragma once

#include <vector>

namespace swr {

struct TimingStatistics {
  double median_ms = 0;
  double p95_ms = 0;  // nearest rank: the smallest time at or above 95% of the runs
  double min_ms = 0;
  int runs = 0;
};

// Throws std::invalid_argument for an empty list.
TimingStatistics summarize_timings(std::vector<double> times_ms);

// Timed runs per variant: at least kMinimumTimedRuns, at most kMaximumTimedRuns, and no more once
// the runs add up to kTimedRunsTargetMs (a slow kernel gets few runs, a fast one many).
inline constexpr int kMinimumTimedRuns = 3;
inline constexpr int kMaximumTimedRuns = 20;
inline constexpr double kTimedRunsTargetMs = 1000.0;

bool needs_another_timed_run(int runs_so_far, double total_ms_so_far);

}  // namespace swr
