// The GEMM family's tuning job, from checked inputs to exit code: tune the shapes against cuBLAS on
// the present device when it is the named GPU, or compile their binaries and say that timing
// needs the GPU when it is not. The sweep tunes the paper's nine square sizes over its strides with
// one kernel binary and writes the tables of best stride, sensitivity and ratio to cuBLAS.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/tuning/gemm_tuning_session.hpp"
#include "tuner/tuning_request.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

// The sweep's sizes (the paper's nine) and, without --config, its kernel binary: the fastest of the
// seven tile binaries at 8192^3 and 16384^3 on the H200 (bench/results/gemm-sweep-h200).
inline constexpr int kGemmSweepSizes[] = {512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384};
inline constexpr const char* kGemmSweepDefaultConfig = "m128n256k64w2x4s3-grid-swz0";

struct GemmTuningJob {
  GpuProfile gpu;                       // as named (the datasheet profile)
  std::vector<GemmTuningShape> shapes;  // gemm_tuning_shapes()
  CompileSettings compile;
  TuningRequest tuning;
  bool sweep = false;
  std::filesystem::path sweep_out;  // empty: bench/results/gemm-sweep-<gpu>
};

// The sweep's problems: the paper's sizes, square, in `dtype`.
std::vector<GemmProblem> gemm_sweep_problems(DataType dtype);

// The variants of each problem: the pruned space (exactly `wanted` when given), or for the sweep
// one binary (the first of `wanted`, else the default) under every paper stride along n.
// UsageError for a config that does not fit `gpu`.
std::vector<GemmTuningShape> gemm_tuning_shapes(const std::vector<GemmProblem>& problems,
                                                const GpuProfile& gpu,
                                                const std::vector<GemmConfig>& wanted, bool sweep);

// 0 when done (failed variants are results too), 1 when compiling only and a binary failed to
// compile, 130 after Ctrl-C.
int run_gemm_tuning_job(const GemmTuningJob& job);

}  // namespace swr
