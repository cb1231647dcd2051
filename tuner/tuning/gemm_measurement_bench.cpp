#include "tuner/tuning/gemm_measurement_bench.hpp"

#include <cstdio>

#include "generator/gemm_kernel_source.hpp"
#include "tuner/counters/l2_counter_session.hpp"
#include "tuner/cublas_baseline.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/gemm_launcher.hpp"
#include "tuner/gemm_reference_kernel.hpp"
#include "tuner/l2_flush.hpp"
#include "tuner/tuning/timing_statistics.hpp"
#include "tuner/tuning/variant_measurement.hpp"  // is_context_fatal

namespace swr {
namespace {

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

// Random A and B of one problem, C, and the fp32 reference of A · B.
struct GemmMeasurementBench::Inputs {
  GemmProblem problem;
  std::uint64_t seed = 0;
  DeviceAllocation a, b, c, reference;
  Inputs(const CudaDriver& driver, const GemmProblem& p, std::uint64_t s)
      : problem(p),
        seed(s),
        a(driver, std::size_t(p.m) * p.k * 2),
        b(driver, std::size_t(p.k) * p.n * 2),
        c(driver, std::size_t(p.m) * p.n * 2),
        reference(driver, std::size_t(p.m) * p.n * 4) {}
  GemmBuffers buffers() const { return {a.pointer(), b.pointer(), c.pointer()}; }
};

GemmMeasurementBench::GemmMeasurementBench() {
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  SWR_CU(driver, cuEventCreate(&start_, CU_EVENT_DEFAULT));
  SWR_CU(driver, cuEventCreate(&stop_, CU_EVENT_DEFAULT));
  flush_ = std::make_unique<L2Flush>(context_);
  fill_ = std::make_unique<DeviceRandomFill>(context_);
  reference_ = std::make_unique<GemmReferenceKernel>(context_);
  cublas_ = CublasBaseline::load(cublas_missing_);
  counters_ =
      std::make_unique<L2CounterSession>(&context_, flush_.get(), [](const std::string&) {});
}

GemmMeasurementBench::~GemmMeasurementBench() {
  counters_.reset();
  inputs_.reset();
  cublas_.reset();
  const CudaDriver& driver = CudaDriver::get();
  if (stop_) driver.cuEventDestroy(stop_);
  if (start_) driver.cuEventDestroy(start_);
  if (stream_) driver.cuStreamDestroy(stream_);
}

std::string GemmMeasurementBench::device_name() const {
  char name[256] = {};
  CudaDriver::get().cuDeviceGetName(name, sizeof(name), context_.device());
  return name;
}

void GemmMeasurementBench::prepare_inputs(const GemmProblem& problem, std::uint64_t seed) {
  if (inputs_ && inputs_->problem == problem && inputs_->seed == seed) return;
  inputs_.reset();  // free the old matrices before allocating the new ones
  inputs_ = std::make_unique<Inputs>(CudaDriver::get(), problem, seed);
  fill_->fill(inputs_->a.pointer(), std::size_t(problem.m) * problem.k, problem.dtype, seed,
              stream_);
  fill_->fill(inputs_->b.pointer(), std::size_t(problem.k) * problem.n, problem.dtype, seed + 1,
              stream_);
  reference_->compute(problem, inputs_->buffers(), inputs_->reference.pointer(), stream_);
  SWR_CU(CudaDriver::get(), cuStreamSynchronize(stream_));
}

nlohmann::json GemmMeasurementBench::method(const GemmVariantJob& job, int timed_run_count) const {
  nlohmann::json method = {
      {"warmup_runs", 1},
      {"timed_runs", timed_run_count},
      {"run_rule", "at least " + std::to_string(kMinimumTimedRuns) + ", at most " +
                       std::to_string(kMaximumTimedRuns) + " timed runs, until they add up to " +
                       format_number("%.0f", kTimedRunsTargetMs) + " ms"},
      {"timer", "device events recorded right before and after the kernel, one run at a time"},
      {"l2_state", "flushed: read 2x L2 before every run"},
      {"l2_flush_bytes", flush_->buffer_bytes()},
      {"reference", "fp32 GPU reference (tiled CUDA-core kernel), every element of C compared"},
      {"tolerance", relative_error_tolerance(job.problem.dtype)},
      {"inputs", "uniform(-1, 1) made on the device"},
      {"input_seed", job.seed},
      {"isolation", "worker process"},
  };
  if (job.cublas) method["baseline"] = "cuBLAS " + (cublas_ ? cublas_->version() : "");
  if (counters_->available()) {
    method["counters"] = "CUPTI range profiler, user replay, L2 flushed each pass";
    method["counter_metric_set"] = counters_->metric_set_name();
    method["counter_passes"] = counters_->passes();
    method["chip"] = counters_->chip();
  } else {
    method["counters"] = "unavailable: " + counters_->unavailable_reason();
  }
  return method;
}

VariantOutcome GemmMeasurementBench::measure_launch(const GemmVariantJob& job, const Launch& launch,
                                                    const std::string& kernel_name) {
  const CudaDriver& driver = CudaDriver::get();
  const GemmProblem& problem = job.problem;
  VariantOutcome outcome;

  // Correctness: every element of C poisoned (0xFF bytes are NaN in f16 and bf16), so an element
  // the kernel never writes fails the check.
  SWR_CU(driver, cuMemsetD8Async(inputs_->c.pointer(), 0xFF, std::size_t(problem.m) * problem.n * 2,
                                 stream_));
  launch(stream_);
  const OutputComparison comparison =
      reference_->compare(problem, inputs_->c.pointer(), inputs_->reference.pointer(), stream_);
  outcome.relative_error = comparison.relative_error;
  outcome.non_finite = comparison.non_finite;
  const double tolerance = relative_error_tolerance(problem.dtype);
  if (!comparison.passes(tolerance)) {
    outcome.status = db::MeasurementStatus::wrong_result;
    outcome.error = "wrong result: relative error " +
                    format_number("%.3g", comparison.relative_error) + " (tolerance " +
                    format_number("%.3g", tolerance) + "), " +
                    std::to_string(comparison.non_finite) + " non-finite elements";
    outcome.method = method(job, 0);
    return outcome;
  }

  launch(stream_);  // warm-up: instruction cache, clocks, TLB
  SWR_CU(driver, cuStreamSynchronize(stream_));
  double total_ms = 0;
  while (needs_another_timed_run(static_cast<int>(outcome.times_ms.size()), total_ms)) {
    flush_->launch(stream_);
    SWR_CU(driver, cuEventRecord(start_, stream_));
    launch(stream_);
    SWR_CU(driver, cuEventRecord(stop_, stream_));
    SWR_CU(driver, cuEventSynchronize(stop_));
    float elapsed_ms = 0;
    SWR_CU(driver, cuEventElapsedTime(&elapsed_ms, start_, stop_));
    outcome.times_ms.push_back(elapsed_ms);
    total_ms += elapsed_ms;
  }

  try {
    outcome.counters = counters_->measure(stream_, launch, kernel_name);
  } catch (const DriverError&) {
    throw;  // the variant's own fault: measure() records it
  } catch (const std::exception& error) {
    outcome.counters_unavailable = std::string("counters failed: ") + error.what();
  }
  if (!counters_->available()) outcome.counters_unavailable = counters_->unavailable_reason();
  outcome.method = method(job, static_cast<int>(outcome.times_ms.size()));
  return outcome;
}

WorkerReply GemmMeasurementBench::measure(const GemmVariantJob& job) {
  const CudaDriver& driver = CudaDriver::get();
  WorkerReply reply;
  const auto fail = [&](db::MeasurementStatus status, const std::string& error) {
    reply.outcome.status = status;
    reply.outcome.error = error;
  };
  if (job.cublas && !cublas_) {
    fail(db::MeasurementStatus::launch_error, cublas_missing_);
    return reply;
  }
  try {
    prepare_inputs(job.problem, job.seed);
  } catch (const DriverError& error) {
    reply.context_lost = is_context_fatal(error.result());
    fail(db::MeasurementStatus::launch_error, std::string("preparing inputs: ") + error.what());
    return reply;
  }

  std::unique_ptr<GemmKernelModule> module;
  if (!job.cublas) {
    try {
      module = std::make_unique<GemmKernelModule>(driver, job.cubin, job.config,
                                                  job.dynamic_shared_bytes, job.gpu.sm_count);
    } catch (const std::exception& error) {
      fail(db::MeasurementStatus::launch_error, std::string("loading the cubin: ") + error.what());
      return reply;
    }
  }

  try {
    const GemmBuffers buffers = inputs_->buffers();
    if (job.cublas) {
      reply.outcome = measure_launch(
          job, [&](CUstream stream) { cublas_->multiply(job.problem, buffers, stream); }, "");
    } else {
      reply.outcome = measure_launch(
          job, [&](CUstream stream) { module->launch(job.problem, buffers, stream, job.config); },
          kGemmEntryName);
      reply.outcome.registers = module->registers_per_thread();
      reply.outcome.blocks_per_sm = module->blocks_per_sm();
    }
    // A wrong kernel may also have written past C into the inputs: make them afresh.
    if (reply.outcome.status == db::MeasurementStatus::wrong_result) inputs_.reset();
    return reply;
  } catch (const DriverError& error) {
    reply.context_lost = is_context_fatal(error.result());
    fail(reply.context_lost ? db::MeasurementStatus::fault : db::MeasurementStatus::launch_error,
         error.what());
  } catch (const std::exception& error) {
    fail(db::MeasurementStatus::launch_error, error.what());
  }
  if (!reply.context_lost && driver.cuCtxSynchronize(context_.context()) != CUDA_SUCCESS) {
    reply.context_lost = true;
    reply.outcome.status = db::MeasurementStatus::fault;
  }
  if (reply.context_lost) (void)module.release();
  return reply;
}

}  // namespace swr
