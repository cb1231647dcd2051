// `swr-tune show --family gemm --m M --n N --k K` (or --size S): every variant of one GEMM shape
// per GPU, fastest first with its ratio to the cuBLAS time measured in the same run, the failed
// ones with their status, and per tile binary how much the block swizzle mattered: the plain
// order, the best and worst stride, and the sensitivity (max - min) / max of TFLOP/s.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "db/results_database.hpp"
#include "swr/gemm_problem.hpp"

namespace swr::cli {

// The GPUs with measurements of `problem` (none when it is not in the database), restricted to
// `gpus` when given: the GPUs a per-shape view of either family shows.
std::vector<db::StoredGpu> gpus_that_measured(const db::ResultsDatabase& database,
                                              const std::optional<db::ProblemId>& problem,
                                              const std::optional<std::set<std::int64_t>>& gpus);

// `gpus`: the GPU ids to show (all measured ones when empty). Returns the exit code.
int show_gemm_shape(const db::ResultsDatabase& database, const GemmProblem& problem,
                    const std::optional<std::set<std::int64_t>>& gpus, bool json);

}  // namespace swr::cli
