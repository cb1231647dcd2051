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

// Before its timed runs a variant runs back to back for this long (no flush between runs): what a
// training step's kernels run at is the GPU held at its power cap, where the clock sits well
// below a short burst's (H100: a median of 1560 MHz at ~700 W against up to 1980), and kernel
// forms lose different shares to it. Timed in bursts, the D64 overlapped ping-pong forward took
// 1.057x the plain three-warpgroup forward at B2 H32 S16384 on an H100; back to back, 0.966x
// (bench/results/attention-backward-ws-h200/stages-2026-11-27/).
inline constexpr double kPowerWarmupMs = 500.0;
// Back-to-back runs of the warm-up: as many as fill kPowerWarmupMs at `run_ms` a run, at least 1
// and at most kMaximumPowerWarmupRuns (a microsecond kernel needs no thousand launches).
inline constexpr int kMaximumPowerWarmupRuns = 1000;
int power_warmup_runs(double run_ms);

// A variant whose first timed run exceeds this factor times the best median of its shape so far
// gets that one run: run-to-run spread on a flushed L2 is under 2%, so it cannot be the best, and
// the runs it skips are a third of a full tune's time.
inline constexpr double kSlowVariantFactor = 1.25;

}  // namespace swr
