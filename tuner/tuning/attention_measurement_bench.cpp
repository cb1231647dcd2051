#include "tuner/tuning/attention_measurement_bench.hpp"

#include "driver/device_resources.hpp"
#include "generator/kernel_source.hpp"
#include "runtime/attention_launcher.hpp"
#include "tuner/attention_reference_kernel.hpp"
#include "tuner/counters/counter_batches.hpp"
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

}  // namespace

// Random inputs of one problem, the rows the check samples and their exact values.
struct AttentionMeasurementBench::Inputs {
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

AttentionMeasurementBench::AttentionMeasurementBench()
    : reference_(std::make_unique<AttentionReferenceKernel>(device_.context())) {}

AttentionMeasurementBench::~AttentionMeasurementBench() = default;

AttentionBuffers AttentionMeasurementBench::buffers() const {
  return {inputs_->q.pointer(), inputs_->k.pointer(), inputs_->v.pointer(), inputs_->o.pointer(),
          inputs_->tile_counter.pointer()};
}

void AttentionMeasurementBench::prepare_inputs(const AttentionProblem& problem,
                                               std::uint64_t seed) {
  if (inputs_ && inputs_->problem.key() == problem.key() && inputs_->seed == seed) return;
  inputs_.reset();  // free the old tensors before allocating the new ones
  inputs_ = std::make_shared<Inputs>(CudaDriver::get(), problem, seed);
  const CUstream stream = device_.stream();
  const DeviceRandomFill& fill = device_.fill();
  fill.fill(inputs_->q.pointer(), query_elements(problem), problem.dtype, seed, stream);
  fill.fill(inputs_->k.pointer(), key_value_elements(problem), problem.dtype, seed + 1, stream);
  fill.fill(inputs_->v.pointer(), key_value_elements(problem), problem.dtype, seed + 2, stream);
  inputs_->rows = sample_reference_rows(problem, seed);
  inputs_->reference = reference_->reference_rows(problem, buffers(), inputs_->rows, stream);
}

// AttentionReferenceKernel::check_output, with the reference rows computed once per inputs.
OutputComparison AttentionMeasurementBench::check_output(const AttentionProblem& problem) {
  const std::vector<std::uint16_t> output =
      reference_->gather_rows(problem, buffers(), inputs_->rows, device_.stream());
  OutputComparison comparison = compare_with_reference(problem, output, inputs_->reference);
  comparison.non_finite = reference_->count_non_finite(
      inputs_->o.pointer(), query_elements(problem), problem.dtype, device_.stream());
  return comparison;
}

nlohmann::json AttentionMeasurementBench::method(const VariantJob& job, int timed_run_count) const {
  nlohmann::json method = device_.common_method(timed_run_count, job.problem.dtype, job.seed);
  method["warmup"] = "the correctness run, just before the timed runs";
  method["reference"] = "GPU, sampled rows + all elements finite";
  method["reference_rows"] = inputs_ ? inputs_->rows.size() : 0;
  if (job.stop_timing_above_ms) {
    method["stop_timing_above_ms"] = *job.stop_timing_above_ms;
    method["stop_rule"] = "one timed run only when it is slower than " +
                          format_number("%.3g", kSlowVariantFactor) +
                          "x the best median so far (it cannot be the best)";
  }
  if (job.config.persistence == Persistence::dynamic) {
    method["timed_span_note"] = "includes the 4-byte reset of the dynamic tile counter";
  }
  device_.add_counter_method(method, false);
  return method;
}

VariantOutcome AttentionMeasurementBench::measure_loaded(
    const VariantJob& job, const std::shared_ptr<AttentionKernelModule>& loaded,
    std::vector<DeferredCount>* deferred, std::size_t reply) {
  const AttentionKernelModule& module = *loaded;
  const CudaDriver& driver = CudaDriver::get();
  const AttentionProblem& problem = job.problem;
  const CUstream stream = device_.stream();
  VariantOutcome outcome;
  outcome.registers = module.registers_per_thread();
  outcome.blocks_per_sm = module.blocks_per_sm();

  // Correctness: every element of O poisoned (0xFF bytes are NaN in f16 and bf16) so that an
  // element the kernel never writes fails the check.
  SWR_CU(driver, cuMemsetD8Async(inputs_->o.pointer(), 0xFF,
                                 query_elements(problem) * element_bytes(problem.dtype), stream));
  module.launch(problem, buffers(), stream);
  SWR_CU(driver, cuStreamSynchronize(stream));
  const std::string compared = " over " + std::to_string(inputs_->rows.size()) + " sampled rows";
  if (!output_check_passes(check_output(problem), problem.dtype, compared, outcome)) {
    outcome.method = method(job, 0);
    return outcome;
  }

  // The correctness run above was the warm-up (instruction cache, clocks, TLB): time now.
  const AttentionBuffers tensors = buffers();
  const MeasurementDevice::Launch launch = [&](CUstream on) {
    module.launch(problem, tensors, on);
  };
  outcome.times_ms = device_.timed_runs(launch, job.stop_timing_above_ms);

  if (deferred != nullptr && job.collect_counters && counted_in_a_batch(outcome.times_ms)) {
    // Counted later with the rest of the batch: the launch holds the module and the tensors.
    const std::shared_ptr<Inputs> inputs = inputs_;
    deferred->push_back(
        {{[loaded, inputs, problem, tensors](CUstream on) { loaded->launch(problem, tensors, on); },
          kAttentionEntryName},
         reply});
    outcome.method = method(job, static_cast<int>(outcome.times_ms.size()));
    return outcome;
  }
  const CountingTime counting =
      device_.count_l2(outcome, job.collect_counters, launch, kAttentionEntryName);
  outcome.method = method(job, static_cast<int>(outcome.times_ms.size()));
  counting.add_to(outcome.method);
  return outcome;
}

WorkerReply AttentionMeasurementBench::measure(const VariantJob& job) {
  return measure_one(job, nullptr, 0);
}

std::vector<WorkerReply> AttentionMeasurementBench::measure_batch(
    const std::vector<VariantJob>& jobs, std::size_t session_size,
    const std::function<void(const nlohmann::json&)>& progress) {
  std::vector<WorkerReply> replies;
  std::vector<DeferredCount> deferred;
  const auto count = [&] {
    if (deferred.empty()) return;
    progress({{"type", "counting"}, {"variants", deferred.size()}});
    device_.count_deferred(deferred, replies, session_size);
  };
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    // Other inputs free these: the variants waiting for counters are counted first.
    if (!inputs_ || inputs_->problem.key() != jobs[i].problem.key() ||
        inputs_->seed != jobs[i].seed) {
      count();
    }
    progress({{"type", "started"}, {"index", i}});
    replies.push_back(measure_one(jobs[i], session_size == 1 ? nullptr : &deferred, i));
    if (replies.back().context_lost) {
      // Their modules and tensors belong to a dead context: left to the process's end.
      (void)new std::vector<DeferredCount>(std::move(deferred));
      return replies;
    }
  }
  count();
  return replies;
}

WorkerReply AttentionMeasurementBench::measure_one(const VariantJob& job,
                                                   std::vector<DeferredCount>* deferred,
                                                   std::size_t reply) {
  std::shared_ptr<AttentionKernelModule> module;
  return device_.measure_guarded({
      .prepare_inputs = [&] { prepare_inputs(job.problem, job.seed); },
      .load_kernel =
          [&] {
            module =
                std::make_shared<AttentionKernelModule>(CudaDriver::get(), job.cubin, job.config,
                                                        job.dynamic_shared_bytes, job.gpu.sm_count);
          },
      .measure_loaded = [&] { return measure_loaded(job, module, deferred, reply); },
      .forget_inputs = [&] { inputs_.reset(); },
      // Never unloaded from a dead context: left to the process's end.
      .abandon_kernel = [&] { (void)new std::shared_ptr<AttentionKernelModule>(module); },
  });
}

}  // namespace swr
