#include "tuner/tuning/variant_measurement.hpp"

#include <cstdio>

#include "generator/kernel_source.hpp"
#include "tuner/attention_launcher.hpp"
#include "tuner/attention_reference_kernel.hpp"
#include "tuner/counters/l2_counter_session.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/l2_flush.hpp"
#include "tuner/tuning/timing_statistics.hpp"

namespace swr {
namespace {

std::size_t query_elements(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.batch) * p.heads * p.seq_q * p.head_dim;
}
std::size_t key_value_elements(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.batch) * p.heads * p.seq_kv * p.head_dim;
}

// One device allocation, freed on destruction.
class DeviceAllocation {
 public:
  DeviceAllocation(const CudaDriver& driver, std::size_t bytes) : driver_(driver) {
    SWR_CU(driver_, cuMemAlloc(&pointer_, bytes));
  }
  ~DeviceAllocation() { driver_.cuMemFree(pointer_); }
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  CUdeviceptr pointer() const { return pointer_; }

 private:
  const CudaDriver& driver_;
  CUdeviceptr pointer_ = 0;
};

std::string format_number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

}  // namespace

bool is_context_fatal(CUresult result) {
  switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

// Random inputs of one problem, the rows the check samples and their exact values.
struct VariantMeasurementBench::Inputs {
  AttentionProblem problem;
  std::uint64_t seed = 0;
  DeviceAllocation q, k, v, o, tile_counter;
  std::vector<std::int64_t> rows;
  std::vector<double> reference;

  Inputs(const CudaDriver& driver, const AttentionProblem& p, std::uint64_t s)
      : problem(p),
        seed(s),
        q(driver, query_elements(p) * element_bytes(p.dtype)),
        k(driver, key_value_elements(p) * element_bytes(p.dtype)),
        v(driver, key_value_elements(p) * element_bytes(p.dtype)),
        o(driver, query_elements(p) * element_bytes(p.dtype)),
        tile_counter(driver, sizeof(int)) {}
};

VariantMeasurementBench::VariantMeasurementBench() {
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  SWR_CU(driver, cuEventCreate(&start_, CU_EVENT_DEFAULT));
  SWR_CU(driver, cuEventCreate(&stop_, CU_EVENT_DEFAULT));
  flush_ = std::make_unique<L2Flush>(context_);
  reference_ = std::make_unique<AttentionReferenceKernel>(context_);
  fill_ = std::make_unique<DeviceRandomFill>(context_);
  // The tuner says "profiling unavailable" once per run, from the outcomes; not once per worker.
  counters_ =
      std::make_unique<L2CounterSession>(&context_, flush_.get(), [](const std::string&) {});
}

VariantMeasurementBench::~VariantMeasurementBench() {
  counters_.reset();
  inputs_.reset();
  const CudaDriver& driver = CudaDriver::get();
  if (stop_) driver.cuEventDestroy(stop_);
  if (start_) driver.cuEventDestroy(start_);
  if (stream_) driver.cuStreamDestroy(stream_);
}

std::string VariantMeasurementBench::device_name() const {
  char name[256] = {};
  CudaDriver::get().cuDeviceGetName(name, sizeof(name), context_.device());
  return name;
}

AttentionBuffers VariantMeasurementBench::buffers() const {
  return {inputs_->q.pointer(), inputs_->k.pointer(), inputs_->v.pointer(), inputs_->o.pointer(),
          inputs_->tile_counter.pointer()};
}

void VariantMeasurementBench::prepare_inputs(const AttentionProblem& problem, std::uint64_t seed) {
  if (inputs_ && inputs_->problem.key() == problem.key() && inputs_->seed == seed) return;
  inputs_.reset();  // free the old tensors before allocating the new ones
  inputs_ = std::make_unique<Inputs>(CudaDriver::get(), problem, seed);
  fill_->fill(inputs_->q.pointer(), query_elements(problem), problem.dtype, seed, stream_);
  fill_->fill(inputs_->k.pointer(), key_value_elements(problem), problem.dtype, seed + 1, stream_);
  fill_->fill(inputs_->v.pointer(), key_value_elements(problem), problem.dtype, seed + 2, stream_);
  inputs_->rows = sample_reference_rows(problem, seed);
  inputs_->reference = reference_->reference_rows(problem, buffers(), inputs_->rows, stream_);
}

// AttentionReferenceKernel::check_output, with the reference rows computed once per inputs.
OutputComparison VariantMeasurementBench::check_output(const AttentionProblem& problem) {
  const std::vector<std::uint16_t> output =
      reference_->gather_rows(problem, buffers(), inputs_->rows, stream_);
  OutputComparison comparison = compare_with_reference(problem, output, inputs_->reference);
  comparison.non_finite = reference_->count_non_finite(
      inputs_->o.pointer(), query_elements(problem), problem.dtype, stream_);
  return comparison;
}

std::vector<double> VariantMeasurementBench::timed_runs(
    const AttentionProblem& problem, const AttentionKernelModule& module,
    std::optional<double> stop_timing_above_ms) {
  const CudaDriver& driver = CudaDriver::get();
  const AttentionBuffers tensors = buffers();
  std::vector<double> times;
  double total_ms = 0;
  while (needs_another_timed_run(static_cast<int>(times.size()), total_ms)) {
    // Every run starts from the same cold L2; the events bracket the kernel alone.
    flush_->launch(stream_);
    SWR_CU(driver, cuEventRecord(start_, stream_));
    module.launch(problem, tensors, stream_);
    SWR_CU(driver, cuEventRecord(stop_, stream_));
    SWR_CU(driver, cuEventSynchronize(stop_));
    float elapsed_ms = 0;
    SWR_CU(driver, cuEventElapsedTime(&elapsed_ms, start_, stop_));
    times.push_back(elapsed_ms);
    total_ms += elapsed_ms;
    if (times.size() == 1 && stop_timing_above_ms && elapsed_ms > *stop_timing_above_ms) break;
  }
  return times;
}

nlohmann::json VariantMeasurementBench::method(const VariantJob& job, int timed_run_count) const {
  nlohmann::json method = {
      {"warmup_runs", 1},
      {"warmup", "the correctness run, just before the timed runs"},
      {"timed_runs", timed_run_count},
      {"run_rule", "at least " + std::to_string(kMinimumTimedRuns) + ", at most " +
                       std::to_string(kMaximumTimedRuns) + " timed runs, until they add up to " +
                       std::to_string(static_cast<int>(kTimedRunsTargetMs)) + " ms"},
      {"timer", "device events recorded right before and after the kernel, one run at a time"},
      {"l2_state", "flushed: read 2x L2 before every run"},
      {"l2_flush_bytes", flush_->buffer_bytes()},
      {"reference", "GPU, sampled rows + all elements finite"},
      {"reference_rows", inputs_ ? inputs_->rows.size() : 0},
      {"tolerance", relative_error_tolerance(job.problem.dtype)},
      {"inputs", "uniform(-1, 1) made on the device"},
      {"input_seed", job.seed},
      {"isolation", "worker process"},
  };
  if (job.stop_timing_above_ms) {
    method["stop_timing_above_ms"] = *job.stop_timing_above_ms;
    method["stop_rule"] = "one timed run only when it is slower than " +
                          format_number("%.3g", kSlowVariantFactor) +
                          "x the best median so far (it cannot be the best)";
  }
  if (job.config.persistence == Persistence::dynamic) {
    method["timed_span_note"] = "includes the 4-byte reset of the dynamic tile counter";
  }
  if (counters_->available()) {
    method["counters"] = "CUPTI range profiler, user replay, L2 flushed each pass";
    method["counter_metric_set"] = counters_->metric_set_name();
    method["counter_passes"] = counters_->passes();
    method["chip"] = counters_->chip();
  } else {
    std::string reason = counters_->unavailable_reason();
    const std::string prefix = "profiling unavailable: ";
    if (reason.rfind(prefix, 0) == 0) reason.erase(0, prefix.size());
    method["counters"] = "unavailable: " + reason;
  }
  return method;
}

VariantOutcome VariantMeasurementBench::measure_loaded(const VariantJob& job,
                                                       const AttentionKernelModule& module) {
  const CudaDriver& driver = CudaDriver::get();
  const AttentionProblem& problem = job.problem;
  VariantOutcome outcome;
  outcome.registers = module.registers_per_thread();
  outcome.blocks_per_sm = module.blocks_per_sm();

  // Correctness: every element of O poisoned (0xFF bytes are NaN in f16 and bf16) so that an
  // element the kernel never writes fails the check.
  SWR_CU(driver, cuMemsetD8Async(inputs_->o.pointer(), 0xFF,
                                 query_elements(problem) * element_bytes(problem.dtype), stream_));
  module.launch(problem, buffers(), stream_);
  SWR_CU(driver, cuStreamSynchronize(stream_));
  const OutputComparison comparison = check_output(problem);
  outcome.relative_error = comparison.relative_error;
  outcome.non_finite = comparison.non_finite;
  const double tolerance = relative_error_tolerance(problem.dtype);
  if (!comparison.passes(tolerance)) {
    outcome.status = db::MeasurementStatus::wrong_result;
    outcome.error = "wrong result: relative error " +
                    format_number("%.3g", comparison.relative_error) + " over " +
                    std::to_string(inputs_->rows.size()) + " sampled rows (tolerance " +
                    format_number("%.3g", tolerance) + "), " +
                    std::to_string(comparison.non_finite) + " non-finite elements";
    outcome.method = method(job, 0);
    return outcome;
  }

  // The correctness run above was the warm-up (instruction cache, clocks, TLB): time now.
  outcome.times_ms = timed_runs(problem, module, job.stop_timing_above_ms);

  const AttentionBuffers tensors = buffers();
  outcome.counters = counters_->measure(
      stream_, [&](CUstream stream) { module.launch(problem, tensors, stream); },
      kAttentionEntryName);
  if (!counters_->available()) outcome.counters_unavailable = counters_->unavailable_reason();
  outcome.method = method(job, static_cast<int>(outcome.times_ms.size()));
  return outcome;
}

WorkerReply VariantMeasurementBench::measure(const VariantJob& job) {
  const CudaDriver& driver = CudaDriver::get();
  WorkerReply reply;
  const auto fail = [&](db::MeasurementStatus status, const std::string& error) {
    reply.outcome.status = status;
    reply.outcome.error = error;
  };
  try {
    prepare_inputs(job.problem, job.seed);
  } catch (const DriverError& error) {
    // Not the variant's fault; say so in its record (e.g. out of memory for these tensors).
    reply.context_lost = is_context_fatal(error.result());
    fail(db::MeasurementStatus::launch_error, std::string("preparing inputs: ") + error.what());
    return reply;
  }

  std::unique_ptr<AttentionKernelModule> module;
  try {
    module = std::make_unique<AttentionKernelModule>(driver, job.cubin, job.config,
                                                     job.dynamic_shared_bytes, job.gpu.sm_count);
  } catch (const std::exception& error) {
    fail(db::MeasurementStatus::launch_error, std::string("loading the cubin: ") + error.what());
    return reply;
  }

  try {
    reply.outcome = measure_loaded(job, *module);
    // A wrong kernel may also have written past O into the inputs: make them afresh (with their
    // reference rows) rather than fail every later variant against damaged inputs.
    if (reply.outcome.status == db::MeasurementStatus::wrong_result) inputs_.reset();
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
  if (reply.context_lost) {
    (void)module.release();  // unloading from a dead context is pointless; the process ends
  }
  return reply;
}

}  // namespace swr
