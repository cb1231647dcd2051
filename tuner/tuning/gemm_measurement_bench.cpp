#include "tuner/tuning/gemm_measurement_bench.hpp"

#include "driver/device_resources.hpp"
#include "generator/gemm_kernel_source.hpp"
#include "runtime/gemm_launcher.hpp"
#include "tuner/counters/l2_counter_session.hpp"
#include "tuner/cublas_baseline.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/gemm_reference_kernel.hpp"

namespace swr {

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

GemmMeasurementBench::GemmMeasurementBench()
    : reference_(std::make_unique<GemmReferenceKernel>(device_.context())),
      cublas_(CublasBaseline::load(cublas_missing_)) {}

GemmMeasurementBench::~GemmMeasurementBench() = default;

void GemmMeasurementBench::prepare_inputs(const GemmProblem& problem, std::uint64_t seed) {
  if (inputs_ && inputs_->problem == problem && inputs_->seed == seed) return;
  inputs_.reset();  // free the old matrices before allocating the new ones
  inputs_ = std::make_unique<Inputs>(CudaDriver::get(), problem, seed);
  const CUstream stream = device_.stream();
  device_.fill().fill(inputs_->a.pointer(), std::size_t(problem.m) * problem.k, problem.dtype, seed,
                      stream);
  device_.fill().fill(inputs_->b.pointer(), std::size_t(problem.k) * problem.n, problem.dtype,
                      seed + 1, stream);
  reference_->compute(problem, inputs_->buffers(), inputs_->reference.pointer(), stream);
  SWR_CU(CudaDriver::get(), cuStreamSynchronize(stream));
}

nlohmann::json GemmMeasurementBench::method(const GemmVariantJob& job, int timed_run_count) const {
  nlohmann::json method = device_.common_method(timed_run_count, job.problem.dtype, job.seed);
  method["reference"] = "fp32 GPU reference (tiled CUDA-core kernel), every element of C compared";
  if (job.cublas) method["baseline"] = "cuBLAS " + (cublas_ ? cublas_->version() : "");
  device_.add_counter_method(method, true);
  return method;
}

VariantOutcome GemmMeasurementBench::measure_launch(const GemmVariantJob& job,
                                                    const MeasurementDevice::Launch& launch,
                                                    const std::string& kernel_name) {
  const CudaDriver& driver = CudaDriver::get();
  const GemmProblem& problem = job.problem;
  const CUstream stream = device_.stream();
  VariantOutcome outcome;

  // Correctness: every element of C poisoned (0xFF bytes are NaN in f16 and bf16), so an element
  // the kernel never writes fails the check.
  SWR_CU(driver, cuMemsetD8Async(inputs_->c.pointer(), 0xFF, std::size_t(problem.m) * problem.n * 2,
                                 stream));
  launch(stream);
  const OutputComparison comparison =
      reference_->compare(problem, inputs_->c.pointer(), inputs_->reference.pointer(), stream);
  if (!output_check_passes(comparison, problem.dtype, "", outcome)) {
    outcome.method = method(job, 0);
    return outcome;
  }

  // The correctness run above and timed_runs' power warm-up warm the caches and the clocks.
  outcome.times_ms = device_.timed_runs(launch);

  const CountingTime counting =
      device_.count_l2(outcome, job.collect_counters, launch, kernel_name);
  outcome.method = method(job, static_cast<int>(outcome.times_ms.size()));
  counting.add_to(outcome.method);
  return outcome;
}

WorkerReply GemmMeasurementBench::measure(const GemmVariantJob& job) {
  if (job.cublas && !cublas_) {
    WorkerReply reply;
    reply.outcome.status = db::MeasurementStatus::launch_error;
    reply.outcome.error = cublas_missing_;
    return reply;
  }
  std::unique_ptr<GemmKernelModule> module;
  MeasurementSteps steps{
      .prepare_inputs = [&] { prepare_inputs(job.problem, job.seed); },
      .load_kernel = {},
      .measure_loaded =
          [&] {
            const GemmBuffers buffers = inputs_->buffers();
            if (job.cublas) {
              return measure_launch(
                  job, [&](CUstream stream) { cublas_->multiply(job.problem, buffers, stream); },
                  "");
            }
            VariantOutcome outcome = measure_launch(
                job,
                [&](CUstream stream) { module->launch(job.problem, buffers, stream, job.config); },
                gemm_entry_name(job.config));
            outcome.registers = module->registers_per_thread();
            outcome.blocks_per_sm = module->blocks_per_sm();
            return outcome;
          },
      .forget_inputs = [&] { inputs_.reset(); },
      .abandon_kernel = [&] { (void)module.release(); },
  };
  if (!job.cublas) {
    steps.load_kernel = [&] {
      module = std::make_unique<GemmKernelModule>(CudaDriver::get(), job.cubin, job.config,
                                                  job.dynamic_shared_bytes, job.gpu.sm_count);
    };
  }
  return device_.measure_guarded(steps);
}

}  // namespace swr
