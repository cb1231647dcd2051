#include "tuner/attention_backward/backward_measurement_bench.hpp"

#include <algorithm>

#include "driver/device_resources.hpp"
#include "generator/attention_backward/attention_backward_family.hpp"
#include "runtime/attention_backward/backward_launcher.hpp"
#include "tuner/attention_backward/backward_reference_kernel.hpp"
#include "tuner/attention_reference_kernel.hpp"
#include "tuner/counters/l2_counter_session.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/tuning/timing_statistics.hpp"

namespace swr {
namespace {

std::size_t query_elements(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.batch) * p.heads * p.seq_q * p.head_dim;
}
std::size_t key_value_elements(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.batch) * p.kv_head_count() * p.seq_kv * p.head_dim;
}
std::size_t query_rows(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.batch) * p.heads * p.seq_q;
}

// The K/V rows as a problem of their own, for sampling and gathering them: heads = K/V heads,
// seq_q = seq_kv.
AttentionProblem key_value_rows(const AttentionProblem& p) {
  AttentionProblem rows = p;
  rows.heads = p.kv_head_count();
  rows.kv_heads = 0;
  rows.seq_q = p.seq_kv;
  rows.causal = false;
  rows.causal_align = CausalAlignment::top_left;
  return rows;
}

// A contiguous 16-bit tensor at `pointer` as the gather of AttentionReferenceKernel reads its rows.
AttentionBuffers rows_at(CUdeviceptr pointer) {
  AttentionBuffers buffers;
  buffers.o = pointer;
  return buffers;
}

}  // namespace

// Random Q, K, V, dO of one problem; O, L and delta of the reference's exact forward; the sampled
// rows and their exact gradients; the outputs and a workspace large enough for any variant.
struct AttentionBackwardMeasurementBench::Inputs {
  AttentionProblem shape;
  std::uint64_t seed = 0;
  DeviceAllocation q, k, v, o, d_o, lse, delta, dq, dk, dv, tile_counter;
  std::unique_ptr<DeviceAllocation> workspace;
  std::size_t workspace_bytes = 0;
  std::vector<std::int64_t> q_rows, kv_rows;
  std::vector<double> dq_reference, dk_reference, dv_reference;

  Inputs(const CudaDriver& driver, const AttentionProblem& p, std::uint64_t s)
      : shape(p),
        seed(s),
        q(driver, query_elements(p) * element_bytes(p.dtype)),
        k(driver, key_value_elements(p) * element_bytes(p.dtype)),
        v(driver, key_value_elements(p) * element_bytes(p.dtype)),
        o(driver, query_elements(p) * element_bytes(p.dtype)),
        d_o(driver, query_elements(p) * element_bytes(p.dtype)),
        lse(driver, query_rows(p) * sizeof(float)),
        delta(driver, query_rows(p) * sizeof(float)),
        dq(driver, query_elements(p) * element_bytes(p.dtype)),
        dk(driver, key_value_elements(p) * element_bytes(p.dtype)),
        dv(driver, key_value_elements(p) * element_bytes(p.dtype)),
        tile_counter(driver, sizeof(int)) {}
};

AttentionBackwardMeasurementBench::AttentionBackwardMeasurementBench()
    : checks_(std::make_unique<AttentionReferenceKernel>(device_.context())),
      reference_(std::make_unique<BackwardReferenceKernel>(device_.context())) {}

AttentionBackwardMeasurementBench::~AttentionBackwardMeasurementBench() = default;

void AttentionBackwardMeasurementBench::prepare_inputs(const AttentionProblem& shape,
                                                       std::uint64_t seed) {
  if (inputs_ && inputs_->shape.key() == shape.key() && inputs_->seed == seed) return;
  inputs_.reset();  // free the old tensors before allocating the new ones
  inputs_ = std::make_unique<Inputs>(CudaDriver::get(), shape, seed);
  const CUstream stream = device_.stream();
  const DeviceRandomFill& fill = device_.fill();
  fill.fill(inputs_->q.pointer(), query_elements(shape), shape.dtype, seed, stream);
  fill.fill(inputs_->k.pointer(), key_value_elements(shape), shape.dtype, seed + 1, stream);
  fill.fill(inputs_->v.pointer(), key_value_elements(shape), shape.dtype, seed + 2, stream);
  fill.fill(inputs_->d_o.pointer(), query_elements(shape), shape.dtype, seed + 3, stream);
  const BackwardReferenceBuffers reference{
      inputs_->q.pointer(), inputs_->k.pointer(),   inputs_->v.pointer(),    inputs_->d_o.pointer(),
      inputs_->o.pointer(), inputs_->lse.pointer(), inputs_->delta.pointer()};
  reference_->forward(shape, reference, stream);
  inputs_->q_rows = sample_reference_rows(shape, seed);
  inputs_->kv_rows = sample_reference_rows(key_value_rows(shape), seed + 1);
  inputs_->dq_reference = reference_->dq_rows(shape, reference, inputs_->q_rows, stream);
  reference_->dkv_rows(shape, reference, inputs_->kv_rows, stream, inputs_->dk_reference,
                       inputs_->dv_reference);
}

AttentionBackwardBuffers AttentionBackwardMeasurementBench::buffers(
    const BackwardVariantJob& job) const {
  const std::size_t needed = backward_workspace_layout(job.problem, job.config).bytes;
  if (inputs_->workspace_bytes < needed) {
    inputs_->workspace.reset();
    inputs_->workspace = std::make_unique<DeviceAllocation>(CudaDriver::get(), needed);
    inputs_->workspace_bytes = needed;
  }
  AttentionBackwardBuffers buffers;
  buffers.q = inputs_->q.pointer();
  buffers.k = inputs_->k.pointer();
  buffers.v = inputs_->v.pointer();
  buffers.o = inputs_->o.pointer();
  buffers.d_o = inputs_->d_o.pointer();
  buffers.lse = inputs_->lse.pointer();
  buffers.dq = inputs_->dq.pointer();
  buffers.dk = inputs_->dk.pointer();
  buffers.dv = inputs_->dv.pointer();
  buffers.workspace = inputs_->workspace->pointer();
  buffers.workspace_bytes = inputs_->workspace_bytes;
  buffers.tile_counter = inputs_->tile_counter.pointer();
  return buffers;
}

nlohmann::json AttentionBackwardMeasurementBench::method(const BackwardVariantJob& job,
                                                         int timed_run_count) const {
  nlohmann::json method = device_.common_method(timed_run_count, job.problem.shape.dtype, job.seed);
  method["warmup"] = "the correctness run, just before the timed runs";
  method["reference"] =
      "GPU: exact forward (O, L, delta) of every row, exact dQ of sampled query rows and dK, dV "
      "of sampled K/V rows; every element of dQ, dK, dV finite";
  method["reference_rows"] = inputs_ ? inputs_->q_rows.size() + inputs_->kv_rows.size() : 0;
  method["timed_span"] = "preprocess + main kernel + postprocess (the whole backward)";
  method["counters_span"] = std::string("the main kernel (") + kBackwardEntryName + ")";
  if (job.stop_timing_above_ms) {
    method["stop_timing_above_ms"] = *job.stop_timing_above_ms;
    method["stop_rule"] = "one timed run only when it is slower than " +
                          format_number("%.3g", kSlowVariantFactor) +
                          "x the best median so far (it cannot be the best)";
  }
  device_.add_counter_method(method, false);
  return method;
}

VariantOutcome AttentionBackwardMeasurementBench::measure_loaded(
    const BackwardVariantJob& job, const AttentionBackwardModule& module) {
  const CudaDriver& driver = CudaDriver::get();
  const AttentionProblem& shape = job.problem.shape;
  const CUstream stream = device_.stream();
  VariantOutcome outcome;
  outcome.registers = module.registers_per_thread();
  outcome.blocks_per_sm = module.blocks_per_sm();

  // Correctness: every element of the three outputs poisoned (0xFF bytes are NaN in f16 and
  // bf16), so that one the kernels never write fails the check.
  const AttentionBackwardBuffers tensors = buffers(job);
  const std::size_t element = element_bytes(shape.dtype);
  SWR_CU(driver, cuMemsetD8Async(tensors.dq, 0xFF, query_elements(shape) * element, stream));
  SWR_CU(driver, cuMemsetD8Async(tensors.dk, 0xFF, key_value_elements(shape) * element, stream));
  SWR_CU(driver, cuMemsetD8Async(tensors.dv, 0xFF, key_value_elements(shape) * element, stream));
  module.launch(job.problem, tensors, stream);
  SWR_CU(driver, cuStreamSynchronize(stream));
  OutputComparison worst;
  const AttentionProblem kv_shape = key_value_rows(shape);
  const std::pair<std::pair<CUdeviceptr, const std::vector<double>*>,
                  std::pair<const AttentionProblem*, const std::vector<std::int64_t>*>>
      gradients[] = {
          {{tensors.dq, &inputs_->dq_reference}, {&shape, &inputs_->q_rows}},
          {{tensors.dk, &inputs_->dk_reference}, {&kv_shape, &inputs_->kv_rows}},
          {{tensors.dv, &inputs_->dv_reference}, {&kv_shape, &inputs_->kv_rows}},
      };
  for (const auto& [output, rows] : gradients) {
    const std::vector<std::uint16_t> got =
        checks_->gather_rows(*rows.first, rows_at(output.first), *rows.second, stream);
    const OutputComparison comparison = compare_with_reference(*rows.first, got, *output.second);
    worst.relative_error = std::max(worst.relative_error, comparison.relative_error);
    worst.non_finite +=
        checks_->count_non_finite(output.first, query_elements(*rows.first), shape.dtype, stream);
  }
  const std::string compared = " over " + std::to_string(inputs_->q_rows.size()) +
                               " sampled rows of dQ and " +
                               std::to_string(inputs_->kv_rows.size()) + " of dK and dV (worst)";
  if (!output_check_passes(worst, shape.dtype, compared, outcome)) {
    outcome.method = method(job, 0);
    return outcome;
  }

  const MeasurementDevice::Launch launch = [&](CUstream on) {
    module.launch(job.problem, tensors, on);
  };
  outcome.times_ms = device_.timed_runs(launch, job.stop_timing_above_ms);

  // The main kernel alone (the timed runs above filled the workspace it reads).
  const MeasurementDevice::Launch main_kernel = [&](CUstream on) {
    module.launch_main(job.problem, tensors, on);
  };
  const CountingTime counting =
      device_.count_l2(outcome, job.collect_counters, main_kernel, kBackwardEntryName);
  outcome.method = method(job, static_cast<int>(outcome.times_ms.size()));
  counting.add_to(outcome.method);
  return outcome;
}

WorkerReply AttentionBackwardMeasurementBench::measure(const BackwardVariantJob& job) {
  std::unique_ptr<AttentionBackwardModule> module;
  return device_.measure_guarded({
      .prepare_inputs = [&] { prepare_inputs(job.problem.shape, job.seed); },
      .load_kernel =
          [&] {
            module = std::make_unique<AttentionBackwardModule>(CudaDriver::get(), job.cubin,
                                                               job.config, job.dynamic_shared_bytes,
                                                               job.gpu.sm_count);
          },
      .measure_loaded = [&] { return measure_loaded(job, *module); },
      .forget_inputs = [&] { inputs_.reset(); },
      .abandon_kernel = [&] { (void)module.release(); },
  });
}

}  // namespace swr
