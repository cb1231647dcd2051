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
// the runs add up to kTimedRunsTargetMs (a slow kernel gets few runs, a fast one many). 0.4 s
// keeps a full tune of a 100+ variant space of 200 ms kernels under 5 minutes; the runs of such
// a kernel, each from a flushed L2, differ by well under 1% on the H200.
inline constexpr int kMinimumTimedRuns = 3;
inline constexpr int kMaximumTimedRuns = 20;
inline constexpr double kTimedRunsTargetMs = 400.0;

bool needs_another_timed_run(int runs_so_far, double total_ms_so_far);

// A variant whose first timed run exceeds this factor times the best median of its shape so far
// gets that one run: run-to-run spread on a flushed L2 is under 2%, so it cannot be the best, and
// the runs it skips are a third of a full tune's time.
inline constexpr double kSlowVariantFactor = 1.25;

}  // namespace swr
