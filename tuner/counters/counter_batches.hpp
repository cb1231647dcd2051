// L2 counters of many launches per profiling session (issue 29). The range profiler's cost is per
// session and per pass (configuration, Start/Stop, the first pass after Enable), not per kernel:
// one session that collects the launches of many variants (each launch its own auto range, the L2
// flushed before each, as for one variant) and decodes their ranges at once makes the counters of
// a variant cost a fraction of a session. This file is the grouping and the fault rule, written
// against a small profiler interface so that it is tested with a fake: the real profiler is
// L2CounterSession (CUPTI), whose measure() is the one-session-per-variant path kept beside it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tuner/counters/l2_counter_session.hpp"

namespace swr {

// What batching needs of a profiler.
class BatchProfiler {
 public:
  virtual ~BatchProfiler() = default;
  virtual bool available() const = 0;
  // The most launches one session takes (its ranges per pass, flushes included, are bounded).
  virtual std::size_t max_launches_per_session() const = 0;
  // One profiling session over `launches`, each preceded by an L2 flush and in its own range(s):
  // their counters, in order. Empty counters for all when profiling is (or becomes) unavailable.
  // Throws BatchLaunchFailed when a launch threw; a driver error that killed the context
  // propagates (the worker process ends with it); any other std::exception means the ranges could
  // not be told apart: the caller falls back to one session per launch.
  virtual std::vector<L2Counters> profile_batch(CUstream stream,
                                                const std::vector<BatchLaunch>& launches) = 0;
  // The one-session-per-variant path (L2CounterSession::measure).
  virtual L2Counters profile_one(CUstream stream, const BatchLaunch& launch) = 0;
};

// The real profiler: an L2CounterSession's batched and single sessions.
class CuptiBatchProfiler : public BatchProfiler {
 public:
  explicit CuptiBatchProfiler(L2CounterSession& session) : session_(session) {}
  bool available() const override { return session_.available(); }
  std::size_t max_launches_per_session() const override {
    return L2CounterSession::kMaxBatchLaunches;
  }
  std::vector<L2Counters> profile_batch(CUstream stream,
                                        const std::vector<BatchLaunch>& launches) override;
  L2Counters profile_one(CUstream stream, const BatchLaunch& launch) override;

 private:
  L2CounterSession& session_;
};

// Positions 0..count-1 in sessions of at most `max_per_session` (at least 1), in order, the
// sessions as even as possible (17 in sessions of 16: 9 and 8, not 16 and 1).
std::vector<std::vector<std::size_t>> plan_counter_sessions(std::size_t count,
                                                            std::size_t max_per_session);

struct BatchedCounters {
  std::vector<L2Counters> counters;  // per launch, in order; empty where failed or unavailable
  std::vector<std::string> failed;   // per launch: why it has none ("" when it has, or unavailable)
  std::size_t sessions = 0;          // profiling sessions opened (batches, re-runs, one-by-one)
  std::string fallback;  // why a batch was first split or counted one by one ("" when none was)
};

// The counters of every launch, `max_per_session` at most per session (0: the profiler's own
// maximum; 1: one session per launch, the old path). A launch that throws loses its counters (its
// failure says why) and the rest of its batch runs again without it, so the other variants keep
// theirs. A batch whose kernels overflow the session's ranges runs again as two halves; one whose
// ranges cannot be told apart runs again one launch per session.
BatchedCounters collect_counters_in_batches(BatchProfiler& profiler, CUstream stream,
                                            const std::vector<BatchLaunch>& launches,
                                            std::size_t max_per_session = 0);

// Launches whose median time is above this are counted one session each, right after their
// timing, even where batches are on: every pass of a session replays the whole batch, so a batch
// saves the sessions' fixed cost (~60 ms on the H200) but not the replays of long kernels
// (figures: docs/tuning-at-scale.md, "L2 counters in batches").
inline constexpr double kBatchedCountersUpToMs = 1.0;

// Whether a variant timed at `times_ms` waits for its batch's session (median at most
// kBatchedCountersUpToMs; never without a timing).
bool counted_in_a_batch(const std::vector<double>& times_ms);

// "SWR_COUNTERS_PER_VARIANT=1" in the environment: one profiling session per variant, as before
// batching (to compare the two on a GPU). Returns the session size to use: 1, or 0 (the
// profiler's maximum).
std::size_t counter_session_size_from_environment();

}  // namespace swr
