// JSON forms of the problem and the GPU profile (and of their database records), as the command
// line prints and writes them.
#pragma once

#include <nlohmann/json.hpp>

#include "db/results_database.hpp"
#include "generator/resource_model.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::cli {

nlohmann::json problem_json(const AttentionProblem& problem);
nlohmann::json gpu_json(const GpuProfile& gpu);
nlohmann::json resources_json(const ResourceUse& resources);
// A GPU and a problem as the results database stores them (show).
nlohmann::json stored_gpu_json(const db::StoredGpu& stored);
nlohmann::json stored_problem_json(const db::StoredProblem& problem);

}  // namespace swr::cli
