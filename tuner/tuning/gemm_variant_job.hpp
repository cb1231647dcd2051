// One GEMM measurement for the worker: a compiled variant, or the cuBLAS baseline of the problem,
// and its messages on the worker protocol (worker_protocol.hpp: the result message is shared with
// attention; the request says "family": "gemm").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

struct GemmVariantJob {
  GemmProblem problem;
  bool cublas = false;  // measure cuBLAS on the problem instead of a compiled variant
  GemmConfig config;    // the variant (unused for cuBLAS)
  std::vector<char> cubin;
  int dynamic_shared_bytes = 0;
  GpuProfile gpu;  // the device it runs on (SM count sizes the persistent grid)
  // Seed of the random inputs: one per tuning run, so every variant of a run sees the same inputs.
  std::uint64_t seed = 0;
};

class GemmVariantMeasurer {
 public:
  virtual ~GemmVariantMeasurer() = default;
  // Never throws for a fault of the variant (that is an outcome); throws when measuring is
  // impossible altogether.
  virtual VariantOutcome measure(const GemmVariantJob& job) = 0;
};

nlohmann::json gemm_problem_to_json(const GemmProblem& problem);
// Throws std::invalid_argument (or nlohmann::json::exception) for a malformed object.
GemmProblem gemm_problem_from_json(const nlohmann::json& json);

nlohmann::json gemm_measure_request(const GemmVariantJob& job);
GemmVariantJob gemm_job_from_measure_request(const nlohmann::json& request);

// Generous time for one measurement: ~1 s of timed runs plus 60 runs at the roofline (check,
// warm-up, counter passes, and a variant many times slower than the roofline), plus the fp32
// reference of new inputs.
double gemm_measurement_timeout_seconds(const GemmProblem& problem, const GpuProfile& gpu);

}  // namespace swr
