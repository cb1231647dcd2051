// Measures one compiled variant on the present device, in the calling process (the measurement
// worker): check the output against the GPU reference, time it from a flushed L2, read its L2
// counters. Inputs are random on the device, made once per (problem, seed) with the reference
// rows, so every variant of a tuning run is checked against the same exact values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/driver/device_context.hpp"
#include "tuner/reference_attention.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {

class L2Flush;
class L2CounterSession;
class AttentionReferenceKernel;
class DeviceRandomFill;
class AttentionKernelModule;
struct AttentionBuffers;

// A CUDA error after which the context is unusable (illegal address, trap, ...).
bool is_context_fatal(CUresult result);

class VariantMeasurementBench {
 public:
  // Opens the selected device, loads the flush, reference and fill kernels and sets up the
  // counters (which may be unavailable: then they stay empty and the outcome says why).
  VariantMeasurementBench();
  ~VariantMeasurementBench();
  VariantMeasurementBench(const VariantMeasurementBench&) = delete;
  VariantMeasurementBench& operator=(const VariantMeasurementBench&) = delete;

  std::string device_name() const;

  // Never throws for a fault of the variant: it becomes the outcome's status (context_lost when
  // the context died with it, after which this bench must not be used again).
  WorkerReply measure(const VariantJob& job);

 private:
  struct Inputs;
  void prepare_inputs(const AttentionProblem& problem, std::uint64_t seed);
  AttentionBuffers buffers() const;
  OutputComparison check_output(const AttentionProblem& problem);
  VariantOutcome measure_loaded(const VariantJob& job, const AttentionKernelModule& module);
  std::vector<double> timed_runs(const AttentionProblem& problem,
                                 const AttentionKernelModule& module,
                                 std::optional<double> stop_timing_above_ms);
  nlohmann::json method(const VariantJob& job, int timed_run_count) const;

  DeviceContext context_;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
  std::unique_ptr<L2Flush> flush_;
  std::unique_ptr<AttentionReferenceKernel> reference_;
  std::unique_ptr<DeviceRandomFill> fill_;
  std::unique_ptr<L2CounterSession> counters_;
  std::unique_ptr<Inputs> inputs_;
};

}  // namespace swr
