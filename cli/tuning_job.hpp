// The attention family's main job (`swr-tune [tune] --gpu G --seq S ...`) from parsed options to
// exit code: check every value and the database path before any GPU work, then tune on the
// present device when it is the named GPU, or compile only, rank by the L2 model and say why, when
// it is not. The GEMM family's is gemm_tuning_job.hpp.
#pragma once

#include "cli/compile_options.hpp"
#include "cli/problem_options.hpp"
#include "cli/tuning_options.hpp"

namespace swr::cli {

// 0 when done (failed variants are results too), 130 after Ctrl-C; throws UsageError for bad
// input before touching the device or the database.
int run_tuning_job(const ProblemOptions& problem, const CompileOptions& compile,
                   const TuningOptions& tuning);

}  // namespace swr::cli
