// Measures one GEMM variant (or cuBLAS) on the present device, in the calling process (the GEMM
// measurement worker): check C against the fp32 GPU reference (C poisoned first), time it from a
// flushed L2 (the run-count rule of timing_statistics.hpp), read its L2 counters. Inputs are
// random on the device, made once per (problem, seed) with their reference, so every variant of a
// run, and cuBLAS, see the same values. The device side shared with the attention bench is
// measurement_device.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tuner/tuning/measurement_device.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {

class GemmReferenceKernel;
class CublasBaseline;

class GemmMeasurementBench {
 public:
  // Opens the selected device (measurement_device.hpp), loads the reference kernel and cuBLAS
  // (optional: without it cuBLAS jobs fail with "cuBLAS not found").
  GemmMeasurementBench();
  ~GemmMeasurementBench();
  GemmMeasurementBench(const GemmMeasurementBench&) = delete;
  GemmMeasurementBench& operator=(const GemmMeasurementBench&) = delete;

  std::string device_name() const { return device_.device_name(); }

  // Never throws for a fault of the variant: it becomes the outcome's status (context_lost when
  // the context died with it, after which this bench must not be used again).
  WorkerReply measure(const GemmVariantJob& job);

 private:
  struct Inputs;
  void prepare_inputs(const GemmProblem& problem, std::uint64_t seed);
  VariantOutcome measure_launch(const GemmVariantJob& job, const MeasurementDevice::Launch& launch,
                                const std::string& kernel_name);
  nlohmann::json method(const GemmVariantJob& job, int timed_run_count) const;

  MeasurementDevice device_;
  std::unique_ptr<GemmReferenceKernel> reference_;
  std::unique_ptr<CublasBaseline> cublas_;
  std::string cublas_missing_;  // why cuBLAS did not load
  std::unique_ptr<Inputs> inputs_;
};

}  // namespace swr
