#include "tuner/tuning/gemm_variant_job.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tuner/tuning/base64.hpp"

namespace swr {

nlohmann::json gemm_problem_to_json(const GemmProblem& problem) {
  return {{"m", problem.m},
          {"n", problem.n},
          {"k", problem.k},
          {"dtype", std::string(to_string(problem.dtype))}};
}

GemmProblem gemm_problem_from_json(const nlohmann::json& json) {
  GemmProblem problem;
  problem.m = json.at("m").get<int>();
  problem.n = json.at("n").get<int>();
  problem.k = json.at("k").get<int>();
  const std::string dtype = json.at("dtype").get<std::string>();
  const std::optional<DataType> parsed = parse_data_type(dtype);
  if (!parsed) throw std::invalid_argument("unknown dtype '" + dtype + "' in a GEMM problem");
  problem.dtype = *parsed;
  return problem;
}

nlohmann::json gemm_measure_request(const GemmVariantJob& job) {
  return {
      {"type", "measure"},
      {"family", "gemm"},
      {"problem", gemm_problem_to_json(job.problem)},
      {"cublas", job.cublas},
      {"config", job.cublas ? nlohmann::json(nullptr) : job.config.to_json()},
      {"cubin_base64", encode_base64(job.cubin)},
      {"dynamic_shared_bytes", job.dynamic_shared_bytes},
      {"gpu",
       {{"name", job.gpu.name},
        {"arch", job.gpu.arch},
        {"sm_count", job.gpu.sm_count},
        {"l2_bytes", job.gpu.l2_bytes}}},
      {"seed", job.seed},
  };
}

GemmVariantJob gemm_job_from_measure_request(const nlohmann::json& request) {
  if (request.value("family", std::string()) != "gemm") {
    throw std::invalid_argument("not a GEMM measure request: " + request.dump().substr(0, 200));
  }
  GemmVariantJob job;
  job.problem = gemm_problem_from_json(request.at("problem"));
  job.cublas = request.at("cublas").get<bool>();
  if (!job.cublas) job.config = GemmConfig::from_json(request.at("config"));
  job.cubin = decode_base64(request.at("cubin_base64").get<std::string>());
  job.dynamic_shared_bytes = request.at("dynamic_shared_bytes").get<int>();
  const nlohmann::json& gpu = request.at("gpu");
  job.gpu.name = gpu.at("name").get<std::string>();
  job.gpu.arch = gpu.at("arch").get<std::string>();
  job.gpu.sm_count = gpu.at("sm_count").get<int>();
  job.gpu.l2_bytes = gpu.at("l2_bytes").get<std::int64_t>();
  job.seed = request.at("seed").get<std::uint64_t>();
  return job;
}

double gemm_measurement_timeout_seconds(const GemmProblem& problem, const GpuProfile& gpu) {
  double roofline = 0;
  if (gpu.peak_tensor_flops > 0) roofline = problem.flops() / gpu.peak_tensor_flops;
  if (gpu.dram_bytes_per_second > 0) {
    roofline = std::max(roofline, problem.compulsory_bytes() / gpu.dram_bytes_per_second);
  }
  // The fp32 reference runs at a few TFLOP/s: allow 1 TFLOP/s.
  const double reference = problem.flops() / 1e12;
  return std::max(60.0, 20.0 * (2.0 + 60.0 * roofline) + 4.0 * reference);
}

}  // namespace swr
