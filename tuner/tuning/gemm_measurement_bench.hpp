// Measures one GEMM variant (or cuBLAS) on the present device, in the calling process (the GEMM
// measurement worker): check C against the fp32 GPU reference (C poisoned first), time it from a
// flushed L2 (the run-count rule of timing_statistics.hpp), read its L2 counters. Inputs are
// random on the device, made once per (problem, seed) with their reference, so every variant of a
// run, and cuBLAS, see the same values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "tuner/driver/device_context.hpp"
#include "tuner/tuning/gemm_variant_job.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {

class L2Flush;
class L2CounterSession;
class DeviceRandomFill;
class GemmReferenceKernel;
class CublasBaseline;

class GemmMeasurementBench {
 public:
  // Opens the selected device, loads the flush, fill and reference kernels, cuBLAS (optional:
  // without it cuBLAS jobs fail with "cuBLAS not found") and the counters (optional too).
  GemmMeasurementBench();
  ~GemmMeasurementBench();
  GemmMeasurementBench(const GemmMeasurementBench&) = delete;
  GemmMeasurementBench& operator=(const GemmMeasurementBench&) = delete;

  std::string device_name() const;

  // Never throws for a fault of the variant: it becomes the outcome's status (context_lost when
  // the context died with it, after which this bench must not be used again).
  WorkerReply measure(const GemmVariantJob& job);

 private:
  struct Inputs;
  using Launch = std::function<void(CUstream)>;
  void prepare_inputs(const GemmProblem& problem, std::uint64_t seed);
  VariantOutcome measure_launch(const GemmVariantJob& job, const Launch& launch,
                                const std::string& kernel_name);
  nlohmann::json method(const GemmVariantJob& job, int timed_run_count) const;

  DeviceContext context_;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
  std::unique_ptr<L2Flush> flush_;
  std::unique_ptr<DeviceRandomFill> fill_;
  std::unique_ptr<GemmReferenceKernel> reference_;
  std::unique_ptr<CublasBaseline> cublas_;
  std::string cublas_missing_;  // why cuBLAS did not load
  std::unique_ptr<L2CounterSession> counters_;
  std::unique_ptr<Inputs> inputs_;
};

}  // namespace swr
