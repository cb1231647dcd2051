#include "tuner/tuning/gemm_variant_job.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tuner/tuning/problem_work.hpp"
#include "tuner/tuning/worker_protocol.hpp"

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
  problem.dtype = data_type_field(json, "a GEMM problem");
  return problem;
}

nlohmann::json gemm_measure_request(const GemmVariantJob& job) {
  nlohmann::json request = {
      {"type", "measure"},
      {"family", "gemm"},
      {"problem", gemm_problem_to_json(job.problem)},
      {"cublas", job.cublas},
      {"config", job.cublas ? nlohmann::json(nullptr) : job.config.to_json()},
  };
  add_kernel_fields(request, job);
  return request;
}

GemmVariantJob gemm_job_from_measure_request(const nlohmann::json& request) {
  if (request.value("family", std::string()) != "gemm") {
    throw std::invalid_argument("not a GEMM measure request: " + request.dump().substr(0, 200));
  }
  GemmVariantJob job;
  job.problem = gemm_problem_from_json(request.at("problem"));
  job.cublas = request.at("cublas").get<bool>();
  if (!job.cublas) job.config = GemmConfig::from_json(request.at("config"));
  read_kernel_fields(request, job);
  return job;
}

double gemm_measurement_timeout_seconds(const GemmProblem& problem, const GpuProfile& gpu) {
  const double roofline = roofline_seconds(problem.flops(), problem.compulsory_bytes(), gpu);
  // The fp32 reference runs at a few TFLOP/s: allow 1 TFLOP/s.
  const double reference = problem.flops() / 1e12;
  return std::max(60.0, 20.0 * (2.0 + 60.0 * roofline) + 4.0 * reference);
}

}  // namespace swr
