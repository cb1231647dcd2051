// JSON forms of a GPU profile and a variant's resources, as the tuner writes them into compile
// results and kernel directories (and the command line prints them); a problem's is
// generator/problem_json.hpp's keyed_problem_json.
#pragma once

#include <nlohmann/json.hpp>

#include "generator/resource_model.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {

nlohmann::json gpu_json(const GpuProfile& gpu);
nlohmann::json resources_json(const ResourceUse& resources);

}  // namespace swr
