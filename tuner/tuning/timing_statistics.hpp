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

// The clock a variant is timed at. A training step's kernels run at the GPU's power cap, at a
// clock the mix of its heavy kernels sets: neither a short burst's (H100: up to 1980 MHz against a
// median of 1560 at ~700 W) nor the one a single kernel settles at when run back to back, where a
// variant that does more work a cycle draws more power and earns a lower clock. So the GPU runs
// the power load (power_load.hpp, the same for every variant) for kPowerWarmupMs before a
// variant's timed runs, and kPowerLoadPerRun times the last run's length before each later one.
// On H100s, each variant run back to back for 0.5 s first put the backward's lagged consumers
// within 0.7% of their lockstep twins; in the training step they were 2.5-4.6% faster with the
// causal mask. Timed beside the load, the twins come in the step's order, and a variant's figure
// repeats within 1.3% between rounds
// (bench/results/attention-backward-ws-h200/power-load-2026-11-27). The figures are 8-13% below the
// back-to-back ones: they rank variants; the step is what to compare with peers.
inline constexpr double kPowerWarmupMs = 500.0;
inline constexpr double kPowerLoadPerRun = 1.0;

// A variant whose first timed run exceeds this factor times the best median of its shape so far
// gets that one run: run-to-run spread on a flushed L2 is under 2%, so it cannot be the best, and
// the runs it skips are a third of a full tune's time.
inline constexpr double kSlowVariantFactor = 1.25;

}  // namespace swr
