// The GEMM family's main job: `swr-tune --family gemm --gpu G (--m M --n N --k K | --size S)` tunes
// one problem against cuBLAS; `--sweep` tunes the paper's nine square sizes over its strides with
// one kernel binary and writes the tables of best stride, sensitivity and ratio to cuBLAS. Every
// value is checked before the device, the compiler or the database is touched (UsageError, exit 2).
// Without the named GPU it compiles the binaries and says that timing needs the GPU.
#pragma once

#include <string>

#include "cli/compile_options.hpp"
#include "cli/gemm_options.hpp"
#include "cli/problem_options.hpp"
#include "cli/tuning_options.hpp"

namespace swr::cli {

// The sweep's sizes (the paper's nine) and, without --config, its kernel binary: the fastest of the
// seven tile binaries at 8192^3 and 16384^3 on the H200 (bench/results/gemm-sweep-h200).
inline constexpr int kGemmSweepSizes[] = {512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384};
inline constexpr const char* kGemmSweepDefaultConfig = "m128n256k64w2x4s3-grid-swz0";

int run_gemm_tuning_job(const ProblemOptions& problem, const CompileOptions& compile,
                        const TuningOptions& tuning, const GemmOptions& gemm);

}  // namespace swr::cli
