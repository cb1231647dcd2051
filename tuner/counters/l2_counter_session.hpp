// L2 counters of one kernel through the CUPTI 13.0 Range Profiler, in-process, on one context:
// auto ranges (one per kernel) with user replay, the L2 flushed at the start of every pass so each
// pass sees the same cold cache (CUPTI User's Guide, "Range Profiling": auto range, user replay).
// Drive it from one thread.
//
// Profiling is gated in the order in which each step needs the one before: driver, context, CUPTI
// library, profiler initialisation, device support, chip name, counter availability, metric
// configuration, Enable. Any failure makes the session unavailable: it says "profiling unavailable:
// <reason>" once, and every measurement returns empty counters, so timing goes on without them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/device_context.hpp"
#include "tuner/counters/l2_metric_set.hpp"

struct CUpti_RangeProfiler_Object;  // cupti_range_profiler.h

namespace swr {

class CuptiLibrary;
class CuptiError;
class L2Flush;
class MetricConfiguration;

// Enqueues the measured work on the stream. Called once per replay pass, so it must be idempotent
// (an attention kernel is: it overwrites O).
using MeasuredLaunch = std::function<void(CUstream)>;
// Receives the one "profiling unavailable: ..." line of a session.
using ProfilingNotice = std::function<void(const std::string&)>;

// Writes the line to stderr, with "swr: " in front.
void print_profiling_notice(const std::string& line);

// One variant's launch in a batch: what to enqueue, and the kernel whose range is its counters.
struct BatchLaunch {
  MeasuredLaunch launch;
  std::string kernel_name;
};

// A launch of a batch threw (a launch error: the variant's fault, not the profiler's). `index` is
// its position in the batch handed to profile_batch.
class BatchLaunchFailed : public std::runtime_error {
 public:
  BatchLaunchFailed(std::size_t index, const std::string& what)
      : std::runtime_error(what), index_(index) {}
  std::size_t index() const { return index_; }

 private:
  std::size_t index_;
};

// A session's ranges did not hold every kernel its launches ran (CUPTI dropped some): the launches
// ran more kernels than the room made for them. A smaller batch may fit.
class RangesDropped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which of a pass's ranges (CUPTI's names, in launch order) is the measured kernel: never the
// flush (found by its kernel name, else the first range, since every pass launches it first);
// the last range whose name contains `kernel_name` when one does. When the ranges carry kernel
// names and none is `kernel_name`, throws std::runtime_error (the counters are missing, not
// another kernel's); when they carry only running numbers ("0", "1", ...: CUPTI 13.0 on an H200
// names auto ranges so), or `kernel_name` is empty, the last range. nullopt when nothing but the
// flush was recorded.
std::optional<std::size_t> select_measured_range(const std::vector<std::string>& range_names,
                                                 const std::string& kernel_name);

// The failure text with a hint for the errors a user can fix (permissions, another profiler).
std::string describe_profiling_error(const CuptiError& error);

// Which range of a batched session's ranges (CUPTI's names, in launch order) holds each launch's
// counters, for launches of kernels `kernel_names`, each launch preceded by the flush. When the
// ranges carry kernel names, the flushes split them into one segment per launch and
// select_measured_range picks in each; when they carry running numbers only, each launch must have
// run exactly one kernel (flush, kernel, flush, kernel, ...). Throws std::runtime_error when the
// ranges cannot be told apart that way (then each launch is profiled in its own session).
std::vector<std::size_t> attribute_batch_ranges(const std::vector<std::string>& range_names,
                                                const std::vector<std::string>& kernel_names);

class L2CounterSession {
 public:
  // `context` is the current context of the calling thread (nullptr when there is none: the
  // session is then unavailable, saying why the driver did not load). `flush` is shared with the
  // timing loop when given; otherwise the session allocates its own once the gate has passed.
  // Both must outlive the session.
  explicit L2CounterSession(const DeviceContext* context, const L2Flush* flush = nullptr,
                            ProfilingNotice notice = print_profiling_notice);
  ~L2CounterSession();
  L2CounterSession(const L2CounterSession&) = delete;
  L2CounterSession& operator=(const L2CounterSession&) = delete;

  bool available() const { return unavailable_reason_.empty(); }
  // "profiling unavailable: <reason>", empty while available.
  const std::string& unavailable_reason() const { return unavailable_reason_; }
  const std::string& chip() const { return chip_; }
  // The metric set CUPTI accepted ("dram_bytes", "l2_fill_sectors", ...), empty if none.
  const std::string& metric_set_name() const { return metric_set_.name; }
  std::size_t passes() const;

  // Profiles what `launch` enqueues on `stream`: every pass runs the flush, then `launch`.
  // `kernel_name` picks the measured range when the launch runs several kernels (see
  // select_measured_range). Returns empty counters, without launching, when profiling is
  // unavailable; a CUPTI failure here makes the session unavailable (said once) and returns
  // empty counters. An exception from `launch`, or a launch that ran no kernel (or more than 15),
  // propagates after the profiler is stopped; the next measurement starts it again.
  L2Counters measure(CUstream stream, const MeasuredLaunch& launch,
                     const std::string& kernel_name = {});

  // One session for many launches (counter_batches.hpp): every pass runs, for each launch in
  // order, the flush and then the launch; all ranges are decoded at once. At most
  // kMaxBatchLaunches. Empty counters for all, without launching, when profiling is unavailable;
  // a CUPTI failure makes the session unavailable (said once) and returns empty counters. A
  // launch that throws is BatchLaunchFailed with its index (a context-fatal driver error
  // propagates as it is); more kernels than ranges throw RangesDropped, ranges that cannot be
  // attributed std::runtime_error. The profiler is stopped in every case; the next measurement
  // starts it again.
  static constexpr std::size_t kMaxBatchLaunches = 32;
  std::vector<L2Counters> measure_batch(CUstream stream, const std::vector<BatchLaunch>& launches);

  // The ranges of the last successful measurement, flush included, and which one was measured.
  const std::vector<std::string>& last_range_names() const { return last_range_names_; }
  std::size_t last_range_index() const { return last_range_index_; }

 private:
  void open(const DeviceContext* context);
  void enable();
  void disable();
  void become_unavailable(const std::string& reason);
  L2Counters collect(CUstream stream, const MeasuredLaunch& launch, const std::string& kernel_name);
  std::vector<L2Counters> collect_batch(CUstream stream, const std::vector<BatchLaunch>& launches);
  // A counter data image for `max_ranges` ranges of the metric configuration (enabled profiler).
  std::vector<std::uint8_t> counter_data_image(std::size_t max_ranges) const;
  // Resets `image` and configures the profiler for auto ranges with user replay into it.
  void configure_pass(std::vector<std::uint8_t>& image, std::size_t max_ranges);
  // Runs `pass` between Start and Stop until CUPTI has every pass; then decodes. Returns the
  // names of the ranges recorded in `image`.
  std::vector<std::string> run_passes(std::vector<std::uint8_t>& image, std::size_t max_ranges,
                                      const std::function<void()>& pass);

  ProfilingNotice notice_;
  std::string unavailable_reason_;
  const CuptiLibrary* cupti_ = nullptr;
  const DeviceContext* context_ = nullptr;
  bool profiler_initialized_ = false;
  std::string chip_;
  L2MetricSet metric_set_;
  std::unique_ptr<MetricConfiguration> configuration_;
  std::unique_ptr<L2Flush> own_flush_;
  const L2Flush* flush_ = nullptr;
  CUpti_RangeProfiler_Object* profiler_ = nullptr;
  bool pass_open_ = false;  // between a successful Start and its Stop
  std::vector<std::uint8_t> counter_data_;
  std::vector<std::uint8_t> batch_counter_data_;  // sized for kMaxBatchLaunches, when first used
  std::vector<std::string> last_range_names_;
  std::size_t last_range_index_ = 0;
};

}  // namespace swr
