// Measures one compiled attention backward variant on the present device, in the measurement
// worker: the three kernels as a user launches them (preprocess, main, postprocess), checked
// against the GPU reference (backward_reference_kernel.hpp) with dQ, dK and dV poisoned first,
// timed from a flushed L2, and the main kernel's L2 counters read. Inputs (Q, K, V, dO random; O,
// L from the reference's exact forward) and the reference rows are made once per (problem, seed),
// so every variant of a run is checked against the same exact values. The device side shared with
// the other families is measurement_device.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tuner/tuning/measurement_device.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {

class AttentionReferenceKernel;
class BackwardReferenceKernel;
class AttentionBackwardModule;
struct AttentionBackwardBuffers;

class AttentionBackwardMeasurementBench {
 public:
  AttentionBackwardMeasurementBench();
  ~AttentionBackwardMeasurementBench();
  AttentionBackwardMeasurementBench(const AttentionBackwardMeasurementBench&) = delete;
  AttentionBackwardMeasurementBench& operator=(const AttentionBackwardMeasurementBench&) = delete;

  std::string device_name() const { return device_.device_name(); }

  // Never throws for a fault of the variant: it becomes the outcome's status.
  WorkerReply measure(const BackwardVariantJob& job);

 private:
  struct Inputs;
  void prepare_inputs(const AttentionProblem& shape, std::uint64_t seed);
  AttentionBackwardBuffers buffers(const BackwardVariantJob& job) const;
  VariantOutcome measure_loaded(const BackwardVariantJob& job,
                                const AttentionBackwardModule& module);
  nlohmann::json method(const BackwardVariantJob& job, int timed_run_count) const;

  MeasurementDevice device_;
  std::unique_ptr<AttentionReferenceKernel> checks_;  // gathers rows, counts non-finite values
  std::unique_ptr<BackwardReferenceKernel> reference_;
  std::unique_ptr<Inputs> inputs_;
};

}  // namespace swr
