// Measures one compiled attention variant on the present device, in the calling process (the
// measurement worker): check the output against the GPU reference, time it from a flushed L2,
// read its L2 counters. Inputs are random on the device, made once per (problem, seed) with the
// reference rows, so every variant of a tuning run is checked against the same exact values.
// The device side shared with the GEMM bench is measurement_device.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tuner/reference_attention.hpp"
#include "tuner/tuning/measurement_device.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {

class AttentionReferenceKernel;
class AttentionKernelModule;
struct AttentionBuffers;

class AttentionMeasurementBench {
 public:
  // Opens the selected device (measurement_device.hpp) and loads the reference kernel.
  AttentionMeasurementBench();
  ~AttentionMeasurementBench();
  AttentionMeasurementBench(const AttentionMeasurementBench&) = delete;
  AttentionMeasurementBench& operator=(const AttentionMeasurementBench&) = delete;

  std::string device_name() const { return device_.device_name(); }

  // Never throws for a fault of the variant: it becomes the outcome's status (context_lost when
  // the context died with it, after which this bench must not be used again).
  WorkerReply measure(const VariantJob& job);
  // Several variants, their counters in as few profiling sessions as `session_size` allows (0:
  // the profiler's maximum; 1: each counted right after its timing, the one-session-per-variant
  // path). `progress` gets {"type":"started","index":i} before each variant and
  // {"type":"counting"} before a batch's counters, so that a worker that dies names its variant.
  // Ends early, with the replies so far, after a variant killed the context (the last reply).
  std::vector<WorkerReply> measure_batch(
      const std::vector<VariantJob>& jobs, std::size_t session_size,
      const std::function<void(const nlohmann::json&)>& progress);

 private:
  struct Inputs;
  void prepare_inputs(const AttentionProblem& problem, std::uint64_t seed);
  AttentionBuffers buffers() const;
  OutputComparison check_output(const AttentionProblem& problem);
  // With `deferred`, the counters wait there (the launch keeps the module and the tensors).
  WorkerReply measure_one(const VariantJob& job, std::vector<DeferredCount>* deferred,
                          std::size_t reply);
  VariantOutcome measure_loaded(const VariantJob& job,
                                const std::shared_ptr<AttentionKernelModule>& module,
                                std::vector<DeferredCount>* deferred, std::size_t reply);
  nlohmann::json method(const VariantJob& job, int timed_run_count) const;

  MeasurementDevice device_;
  std::unique_ptr<AttentionReferenceKernel> reference_;
  std::shared_ptr<Inputs> inputs_;  // shared with the launches of deferred counters
};

}  // namespace swr
