// What the tuning session asks of whatever measures a compiled variant on the device. The real
// implementation runs the measurement in a worker process (worker_client.hpp); tests substitute a
// fake, so that the session's bookkeeping (resume, limits, interruption) is tested without a GPU.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/records.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/counters/l2_metric_set.hpp"

namespace swr {

// Host milliseconds since `start`: the method's "host_ms" (where a variant's measurement time goes;
// on a host of several GPUs it shows what the devices' workers wait for).
inline double host_ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// One compiled variant of a family whose variants are one kernel binary each (both attention
// passes) to measure.
template <class Problem, class Config>
struct VariantJobOf {
  Problem problem;
  Config config;
  std::vector<char> cubin;
  int dynamic_shared_bytes = 0;
  GpuProfile gpu;  // the device it runs on (SM count sizes the persistent grid)
  // Seed of the random inputs: one per tuning run, so every variant of a run sees the same inputs.
  std::uint64_t seed = 0;
  // A variant whose first timed run is slower than this cannot be the best: it gets no more timed
  // runs (its counters are still taken). Unset: the full run count.
  std::optional<double> stop_timing_above_ms;
  // False: timing only, no L2 counters (the counters policy, counters_policy.hpp).
  bool collect_counters = true;
};
using VariantJob = VariantJobOf<AttentionProblem, AttentionConfig>;
using BackwardVariantJob = VariantJobOf<AttentionBackwardProblem, AttentionBackwardConfig>;

// What measuring it gave. Failed variants carry their status and error text.
struct VariantOutcome {
  db::MeasurementStatus status = db::MeasurementStatus::ok;
  std::string error;
  std::vector<double> times_ms;          // the timed runs, each from a flushed L2
  std::optional<double> relative_error;  // against the GPU reference
  std::int64_t non_finite = 0;           // NaN/inf elements of the output
  L2Counters counters;                   // empty when profiling is unavailable
  // "profiling unavailable: <reason>" when the counters are missing for that reason.
  std::string counters_unavailable;
  // The job asked for none (collect_counters false).
  bool counters_skipped = false;
  // Why the profiler gave nothing for this variant while it was available.
  std::string counters_failed;
  std::optional<int> registers;
  std::optional<int> blocks_per_sm;
  nlohmann::json method = nlohmann::json::object();  // how it was checked, timed and counted
  // The user asked to stop while it ran and it was abandoned: nothing to record.
  bool dropped = false;
};

template <class Problem, class Config>
class VariantMeasurerOf {
 public:
  using Job = VariantJobOf<Problem, Config>;
  virtual ~VariantMeasurerOf() = default;
  // Never throws for a fault of the variant itself (that is an outcome); throws when measuring is
  // impossible altogether (e.g. the device cannot be opened).
  virtual VariantOutcome measure(const Job& job) = 0;
  // Several variants at once, so that their L2 counters are collected in one profiling session
  // (variant_batches.hpp); outcomes in the order given. By default one measure() each.
  virtual std::vector<VariantOutcome> measure_batch(const std::vector<Job>& jobs) {
    std::vector<VariantOutcome> outcomes;
    for (const Job& job : jobs) outcomes.push_back(measure(job));
    return outcomes;
  }
  // The most variants measure_batch gains from at once (1: no batching).
  virtual std::size_t batch_size() const { return 1; }
};
using VariantMeasurer = VariantMeasurerOf<AttentionProblem, AttentionConfig>;

// How many variants a device of the session takes at once: the measurers' common batch size when
// counters are collected (batching is for them), else 1.
template <class Measurer>
std::size_t counter_batch_size(const std::vector<Measurer*>& measurers, bool collect_counters) {
  if (!collect_counters || measurers.empty()) return 1;
  std::size_t size = measurers.front()->batch_size();
  for (const Measurer* measurer : measurers) size = std::min(size, measurer->batch_size());
  return std::max<std::size_t>(size, 1);
}
using BackwardVariantMeasurer =
    VariantMeasurerOf<AttentionBackwardProblem, AttentionBackwardConfig>;

// One GEMM measurement: a compiled variant, or the cuBLAS baseline of the problem.
struct GemmVariantJob {
  GemmProblem problem;
  bool cublas = false;  // measure cuBLAS on the problem instead of a compiled variant
  GemmConfig config;    // the variant (unused for cuBLAS)
  std::vector<char> cubin;
  int dynamic_shared_bytes = 0;
  GpuProfile gpu;  // the device it runs on (SM count sizes the persistent grid)
  // Seed of the random inputs: one per tuning run, so every variant of a run sees the same inputs.
  std::uint64_t seed = 0;
  // False: timing only, no L2 counters (the counters policy, counters_policy.hpp).
  bool collect_counters = true;
};

class GemmVariantMeasurer {
 public:
  virtual ~GemmVariantMeasurer() = default;
  // Never throws for a fault of the variant (that is an outcome); throws when measuring is
  // impossible altogether.
  virtual VariantOutcome measure(const GemmVariantJob& job) = 0;
};

}  // namespace swr
