// The views `swr-tune show` prints besides its summary and attention tables: the database's GPU
// and problem records as JSON, the GEMM shape view, and the L2 model's stored predictions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "db/results_database.hpp"
#include "swr/gemm_problem.hpp"

namespace swr::cli {

// A GPU and a problem as the results database stores them.
nlohmann::json stored_gpu_json(const db::StoredGpu& stored);
nlohmann::json stored_problem_json(const db::StoredProblem& problem);

// `swr-tune show --family gemm --m M --n N --k K` (or --size S): every variant of one GEMM shape
// per GPU, fastest first with its ratio to the cuBLAS time measured in the same run, the failed
// ones with their status, and per tile binary how much the block swizzle mattered: the plain
// order, the best and worst stride, and the sensitivity (max - min) / max of TFLOP/s.
// The GPUs with measurements of `problem` (none when it is not in the database), restricted to
// `gpus` when given: the GPUs a per-shape view of either family shows.
std::vector<db::StoredGpu> gpus_that_measured(const db::ResultsDatabase& database,
                                              const std::optional<db::ProblemId>& problem,
                                              const std::optional<std::set<std::int64_t>>& gpus);

// `gpus`: the GPU ids to show (all measured ones when empty). Returns the exit code.
int show_gemm_shape(const db::ResultsDatabase& database, const GemmProblem& problem,
                    const std::optional<std::set<std::int64_t>>& gpus, bool json);

// `swr-tune show --seq S` for GPUs that were never here: the L2 model's predictions stored by a
// tune without the GPU, printed in their own section and JSON key, never mixed with measurements.
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
