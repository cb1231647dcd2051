// The device side that every family's measurement bench shares (attention_measurement_bench.hpp,
// gemm_measurement_bench.hpp): the context, a stream, the L2 flush, the random fill and the L2
// counters; the timed runs of the timing rule, each from a flushed L2; the method notes every
// stored row carries; and how a fault of the variant becomes its outcome instead of an exception.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "driver/device_context.hpp"
#include "swr/data_type.hpp"
#include "tuner/counters/l2_counter_session.hpp"
#include "tuner/reference_attention.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {

class L2Flush;
class L2CounterSession;
class DeviceRandomFill;
class PowerLoad;

// One measurement of a bench, step by step. measure_guarded turns an exception of any step into
// the reply's status, so that a faulty variant costs only its own measurement.
struct MeasurementSteps {
  // Inputs and their reference, made once per (problem, seed). Failing here is not the
  // variant's fault, but its record says so (e.g. out of memory for these tensors).
  std::function<void()> prepare_inputs;
  std::function<void()> load_kernel;  // the variant's cubin; empty for a library baseline
  std::function<VariantOutcome()> measure_loaded;  // check, time, count
  // After a wrong result: the kernel may also have written past its output into the inputs.
  std::function<void()> forget_inputs;
  // After a lost context: unloading from a dead context is pointless, the process ends.
  std::function<void()> abandon_kernel;
};

// A variant's counting: its profiling (or its share of a batch's) and the wait for the host's
// profiler before it (gpu_lock.hpp), in host milliseconds; add_to writes both into the method's
// host_ms (counters, profiler_wait).
struct CountingTime {
  double counters_ms = 0;
  double profiler_wait_ms = 0;
  void add_to(nlohmann::json& method) const;
};

// A variant measured but not yet counted (a batch's counters come in one profiling session after
// all its variants are timed): its launch owns what it needs (module, tensors), and `reply` is its
// place among the batch's replies.
struct DeferredCount {
  BatchLaunch launch;
  std::size_t reply = 0;
};

class MeasurementDevice {
 public:
  using Launch = std::function<void(CUstream)>;

  // Opens the selected device, loads the flush and fill kernels and sets up the counters (which
  // may be unavailable: then they stay empty and the outcome says why).
  MeasurementDevice();
  ~MeasurementDevice();
  MeasurementDevice(const MeasurementDevice&) = delete;
  MeasurementDevice& operator=(const MeasurementDevice&) = delete;

  const DeviceContext& context() const { return context_; }
  CUstream stream() const { return stream_; }
  const DeviceRandomFill& fill() const { return *fill_; }
  L2CounterSession& counters() { return *counters_; }
  std::string device_name() const;

  // Never throws for a fault of the variant: it becomes the outcome's status (context_lost when
  // the context died with it, after which this device must not be used again).
  WorkerReply measure_guarded(const MeasurementSteps& steps);

  // The timed runs of the timing rule (timing_statistics.hpp), after kPowerWarmupMs of the power
  // load and each after the last run's length of it: each from an L2 the flush emptied, device
  // events around the kernel alone; only one when it is over `stop_above_ms`.
  std::vector<double> timed_runs(const Launch& launch, std::optional<double> stop_above_ms = {});

  // The L2 counters of what `launch` enqueues (`kernel_name` picks its range), into `outcome`:
  // none when `collect` is false (counters_skipped); the session's reason when profiling is
  // unavailable; counters_failed when the profiler gave nothing for this launch. A driver error
  // (the variant's fault) propagates. Returns the host time it took, and how long of it went to
  // waiting for the host's profiler (take_profiler_turn).
  CountingTime count_l2(VariantOutcome& outcome, bool collect, const Launch& launch,
                        const std::string& kernel_name);

  // The counters of `deferred` in as few profiling sessions as `session_size` allows (0: the
  // profiler's maximum; counter_batches.hpp), into their replies: counters, or why none; each
  // reply's host_ms.counters is its share of the sessions' time. Clears `deferred`.
  void count_deferred(std::vector<DeferredCount>& deferred, std::vector<WorkerReply>& replies,
                      std::size_t session_size);

  // The method notes every family's rows share: warm-up, run rule, timer, L2 state, tolerance,
  // inputs and isolation.
  nlohmann::json common_method(int timed_run_count, DataType dtype, std::uint64_t seed) const;
  // How the counters were taken, or "unavailable: <why>". With `whole_reason` the why keeps the
  // session's "profiling unavailable: " prefix, as GEMM rows have always stored it.
  void add_counter_method(nlohmann::json& method, bool whole_reason) const;

 private:
  // One run of `launch` between device events on the stream, after what is already queued; its ms.
  float time_one_run(const Launch& launch);

  DeviceContext context_;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
  std::unique_ptr<L2Flush> flush_;
  std::unique_ptr<DeviceRandomFill> fill_;
  std::unique_ptr<PowerLoad> power_load_;
  std::unique_ptr<L2CounterSession> counters_;
};

// Records the output's comparison with the reference in `outcome` and says whether it passed the
// tolerance of `dtype`. If not, `outcome` becomes a wrong result: "wrong result: relative error
// E<compared> (tolerance T), N non-finite elements".
bool output_check_passes(const OutputComparison& comparison, DataType dtype,
                         const std::string& compared, VariantOutcome& outcome);

// `value` with printf's `format`.
std::string format_number(const char* format, double value);

}  // namespace swr
