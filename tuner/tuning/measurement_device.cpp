#include "tuner/tuning/measurement_device.hpp"

#include <cstdio>

#include "tuner/counters/counter_batches.hpp"
#include "tuner/counters/l2_counter_session.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/gpu_lock.hpp"
#include "tuner/l2_flush.hpp"
#include "tuner/power_load.hpp"
#include "tuner/tuning/timing_statistics.hpp"

namespace swr {

std::string format_number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

bool output_check_passes(const OutputComparison& comparison, DataType dtype,
                         const std::string& compared, VariantOutcome& outcome) {
  outcome.relative_error = comparison.relative_error;
  outcome.non_finite = comparison.non_finite;
  const double tolerance = relative_error_tolerance(dtype);
  if (comparison.passes(tolerance)) return true;
  outcome.status = db::MeasurementStatus::wrong_result;
  outcome.error = "wrong result: relative error " +
                  format_number("%.3g", comparison.relative_error) + compared + " (tolerance " +
                  format_number("%.3g", tolerance) + "), " + std::to_string(comparison.non_finite) +
                  " non-finite elements";
  return false;
}

MeasurementDevice::MeasurementDevice() {
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  SWR_CU(driver, cuEventCreate(&start_, CU_EVENT_DEFAULT));
  SWR_CU(driver, cuEventCreate(&stop_, CU_EVENT_DEFAULT));
  flush_ = std::make_unique<L2Flush>(context_);
  fill_ = std::make_unique<DeviceRandomFill>(context_);
  power_load_ = std::make_unique<PowerLoad>(context_, stream_);
  // The tuner says "profiling unavailable" once per run, from the outcomes; not once per worker.
  counters_ =
      std::make_unique<L2CounterSession>(&context_, flush_.get(), [](const std::string&) {});
}

MeasurementDevice::~MeasurementDevice() {
  counters_.reset();  // it profiles with the flush and the context: before either goes
  const CudaDriver& driver = CudaDriver::get();
  if (stop_) driver.cuEventDestroy(stop_);
  if (start_) driver.cuEventDestroy(start_);
  if (stream_) driver.cuStreamDestroy(stream_);
}

std::string MeasurementDevice::device_name() const {
  char name[256] = {};
  CudaDriver::get().cuDeviceGetName(name, sizeof(name), context_.device());
  return name;
}

WorkerReply MeasurementDevice::measure_guarded(const MeasurementSteps& steps) {
  const CudaDriver& driver = CudaDriver::get();
  WorkerReply reply;
  const auto fail = [&](db::MeasurementStatus status, const std::string& error) {
    reply.outcome.status = status;
    reply.outcome.error = error;
  };
  try {
    steps.prepare_inputs();
  } catch (const DriverError& error) {
    reply.context_lost = is_context_fatal(error.result());
    fail(db::MeasurementStatus::launch_error, std::string("preparing inputs: ") + error.what());
    return reply;
  }

  const auto load_start = std::chrono::steady_clock::now();
  if (steps.load_kernel) {
    try {
      steps.load_kernel();
    } catch (const std::exception& error) {
      fail(db::MeasurementStatus::launch_error, std::string("loading the cubin: ") + error.what());
      return reply;
    }
  }

  const double load_ms = host_ms_since(load_start);
  try {
    const auto measure_start = std::chrono::steady_clock::now();
    reply.outcome = steps.measure_loaded();
    reply.outcome.method["host_ms"]["load"] = load_ms;
    reply.outcome.method["host_ms"]["check_time_count"] = host_ms_since(measure_start);
    // Make the inputs afresh (with their reference) rather than fail every later variant against
    // damaged ones.
    if (reply.outcome.status == db::MeasurementStatus::wrong_result) steps.forget_inputs();
    return reply;
  } catch (const DriverError& error) {
    reply.context_lost = is_context_fatal(error.result());
    fail(reply.context_lost ? db::MeasurementStatus::fault : db::MeasurementStatus::launch_error,
         error.what());
  } catch (const std::exception& error) {
    fail(db::MeasurementStatus::launch_error, error.what());
  }
  // An error the list above does not know may still have killed the context: ask it.
  if (!reply.context_lost && driver.cuCtxSynchronize(context_.context()) != CUDA_SUCCESS) {
    reply.context_lost = true;
    reply.outcome.status = db::MeasurementStatus::fault;
  }
  if (reply.context_lost) steps.abandon_kernel();
  return reply;
}

float MeasurementDevice::time_one_run(const Launch& launch) {
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuEventRecord(start_, stream_));
  launch(stream_);
  SWR_CU(driver, cuEventRecord(stop_, stream_));
  SWR_CU(driver, cuEventSynchronize(stop_));
  float elapsed_ms = 0;
  SWR_CU(driver, cuEventElapsedTime(&elapsed_ms, start_, stop_));
  return elapsed_ms;
}

std::vector<double> MeasurementDevice::timed_runs(const Launch& launch,
                                                  std::optional<double> stop_above_ms) {
  // One run timed for its length, then the power load: the GPU at its cap, at a clock a mix of
  // work sets (timing_statistics.hpp), before the first timed run and the last run's length of it
  // before each.
  double last_ms = time_one_run(launch);
  power_load_->launch(stream_, kPowerWarmupMs);
  std::vector<double> times;
  double total_ms = 0;
  while (needs_another_timed_run(static_cast<int>(times.size()), total_ms)) {
    // Every run starts from the same cold L2; the events bracket the kernel alone.
    if (!times.empty()) power_load_->launch(stream_, kPowerLoadPerRun * last_ms);
    flush_->launch(stream_);
    const float elapsed_ms = time_one_run(launch);
    times.push_back(elapsed_ms);
    total_ms += elapsed_ms;
    last_ms = elapsed_ms;
    if (times.size() == 1 && stop_above_ms && elapsed_ms > *stop_above_ms) break;
  }
  return times;
}

void CountingTime::add_to(nlohmann::json& method) const {
  method["host_ms"]["counters"] = counters_ms;
  method["host_ms"]["profiler_wait"] = profiler_wait_ms;
}

CountingTime MeasurementDevice::count_l2(VariantOutcome& outcome, bool collect,
                                         const Launch& launch, const std::string& kernel_name) {
  CountingTime time;
  if (!collect) {
    outcome.counters_skipped = true;
    return time;
  }
  const std::unique_ptr<ExclusiveFileLock> turn =
      counters_->available() ? take_profiler_turn(time.profiler_wait_ms) : nullptr;
  const auto counting_start = std::chrono::steady_clock::now();
  try {
    outcome.counters = counters_->measure(stream_, launch, kernel_name);
  } catch (const DriverError&) {
    throw;  // the variant's own fault: measure_guarded records it
  } catch (const std::exception& error) {
    outcome.counters_failed = error.what();
  }
  if (!counters_->available()) outcome.counters_unavailable = counters_->unavailable_reason();
  time.counters_ms = host_ms_since(counting_start);
  return time;
}

void MeasurementDevice::count_deferred(std::vector<DeferredCount>& deferred,
                                       std::vector<WorkerReply>& replies,
                                       std::size_t session_size) {
  if (deferred.empty()) return;
  double wait_ms = 0;
  const std::unique_ptr<ExclusiveFileLock> turn =
      counters_->available() ? take_profiler_turn(wait_ms) : nullptr;
  const auto counting_start = std::chrono::steady_clock::now();
  std::vector<BatchLaunch> launches;
  for (const DeferredCount& count : deferred) launches.push_back(count.launch);
  CuptiBatchProfiler profiler(*counters_);
  const BatchedCounters counted =
      collect_counters_in_batches(profiler, stream_, launches, session_size);
  const double share_ms = host_ms_since(counting_start) / static_cast<double>(deferred.size());
  for (std::size_t i = 0; i < deferred.size(); ++i) {
    VariantOutcome& outcome = replies.at(deferred[i].reply).outcome;
    outcome.counters = counted.counters[i];
    outcome.counters_failed = counted.failed[i];
    if (!counters_->available()) outcome.counters_unavailable = counters_->unavailable_reason();
    outcome.method["host_ms"]["counters"] = share_ms;
    outcome.method["host_ms"]["profiler_wait"] = wait_ms / static_cast<double>(deferred.size());
    outcome.method["counter_batch"] = {{"variants", deferred.size()},
                                       {"sessions", counted.sessions}};
    if (!counted.fallback.empty()) outcome.method["counter_batch"]["fallback"] = counted.fallback;
  }
  deferred.clear();
}

nlohmann::json MeasurementDevice::common_method(int timed_run_count, DataType dtype,
                                                std::uint64_t seed) const {
  return {
      {"warmup_runs", 1},
      {"power_warmup", "tensor-core power load (the same for every variant) for " +
                           std::to_string(static_cast<int>(kPowerWarmupMs)) +
                           " ms right before the timed runs, and as long as the last run before "
                           "each later one (the GPU at its power cap, its clock set by a mix of "
                           "work)"},
      {"timed_runs", timed_run_count},
      {"run_rule", "at least " + std::to_string(kMinimumTimedRuns) + ", at most " +
                       std::to_string(kMaximumTimedRuns) + " timed runs, until they add up to " +
                       std::to_string(static_cast<int>(kTimedRunsTargetMs)) + " ms"},
      {"timer", "device events recorded right before and after the kernel, one run at a time"},
      {"l2_state", "flushed: read 2x L2 before every run"},
      {"l2_flush_bytes", flush_->buffer_bytes()},
      {"tolerance", relative_error_tolerance(dtype)},
      {"inputs", "uniform(-1, 1) made on the device"},
      {"input_seed", seed},
      {"isolation", "worker process"},
  };
}

void MeasurementDevice::add_counter_method(nlohmann::json& method, bool whole_reason) const {
  if (counters_->available()) {
    method["counters"] = "CUPTI range profiler, user replay, L2 flushed each pass";
    method["counter_metric_set"] = counters_->metric_set_name();
    method["counter_passes"] = counters_->passes();
    method["chip"] = counters_->chip();
    return;
  }
  std::string reason = counters_->unavailable_reason();
  const std::string prefix = "profiling unavailable: ";
  if (!whole_reason && reason.rfind(prefix, 0) == 0) reason.erase(0, prefix.size());
  method["counters"] = "unavailable: " + reason;
}

}  // namespace swr
