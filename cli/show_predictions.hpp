// `swr-tune show --seq S` for GPUs that were never here: the L2 model's predictions stored by a
// tune without the GPU, printed in their own section and JSON key, never mixed with measurements.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>

#include "db/results_database.hpp"

namespace swr::cli {

struct GpuPredictions {
  db::StoredGpu gpu;
  std::vector<db::StoredPrediction> predictions;  // newest per (config, model), fastest first
};

// Every GPU (or only those in `gpu_ids`) with predictions for `problem`.
std::vector<GpuPredictions> stored_predictions(
    const db::ResultsDatabase& database, db::ProblemId problem,
    const std::optional<std::set<std::int64_t>>& gpu_ids);

void print_predictions(std::ostream& out, const std::string& problem_key,
                       const GpuPredictions& predicted);

nlohmann::json predictions_json(const GpuPredictions& predicted);

}  // namespace swr::cli
