// JSON forms of the problem and the GPU profile, as the command line prints and writes them.
#pragma once

#include <nlohmann/json.hpp>

#include "generator/resource_model.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::cli {

nlohmann::json problem_json(const AttentionProblem& problem);
nlohmann::json gpu_json(const GpuProfile& gpu);
nlohmann::json resources_json(const ResourceUse& resources);

}  // namespace swr::cli
