// JSON forms of a GPU profile and a variant's resources, as the tuner writes them into compile
// results and kernel directories (and the command line prints them); a problem's is
// generator/problem_json.hpp's keyed_problem_json.
#pragma once

#include <nlohmann/json.hpp>

#include "generator/problem_json.hpp"
#include "generator/resource_model.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {

nlohmann::json gpu_json(const GpuProfile& gpu);
nlohmann::json resources_json(const ResourceUse& resources);

// A compile outcome of either family: the problem (with its key), the GPU and arch, the cubin
// cache, how long it took, how many kernels compiled and failed, and `results` (one entry each).
template <class Target, class Outcome>
nlohmann::json compile_outcome_json(const Target& target, const Outcome& outcome,
                                    nlohmann::json results) {
  return {
      {"problem", keyed_problem_json(target.problem)},
      {"gpu", gpu_json(target.gpu)},
      {"arch", target.gpu.arch},
      {"cache_dir", outcome.cache_dir.string()},
      {"seconds", outcome.seconds},
      {"ok", outcome.succeeded()},
      {"failed", outcome.failed},
      {"results", std::move(results)},
  };
}

}  // namespace swr
