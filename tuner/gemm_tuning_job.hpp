// The GEMM family's part of a tuning job (tuning_job.hpp): the shapes a session tunes against
// cuBLAS on the present device, or, when the named GPU is not here, compiling their binaries and
// saying that timing needs the GPU. The sweep tunes the paper's nine square sizes over its strides
// with one kernel binary and writes the tables of best stride, sensitivity and ratio to cuBLAS.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/plan_file.hpp"
#include "tuner/tuning/gemm_tuning_session.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

// The sweep's sizes (the paper's nine) and, without --config, its kernel binary: the fastest of the
// seven tile binaries at 8192^3 and 16384^3 on the H200 (bench/results/gemm-sweep-h200).
inline constexpr int kGemmSweepSizes[] = {512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384};
inline constexpr const char* kGemmSweepDefaultConfig = "m128n256k64w2x4s3-grid-swz0";

// The sweep's problems: the paper's sizes, square, in `dtype`.
std::vector<GemmProblem> gemm_sweep_problems(DataType dtype);

// The variants of each problem: the pruned space (exactly its configs when given), or for the
// sweep one binary (the problem's first config, else the default) under every paper stride along
// n. UsageError for a config that does not fit `gpu`.
std::vector<GemmTuningShape> gemm_tuning_shapes(const std::vector<PlannedGemm>& planned,
                                                const GpuProfile& gpu, bool sweep);

// Without the named GPU: compile the shapes' kernel binaries, rank each shape's variants by the
// time model (stored in `database` as predictions, never as measurements) and say that timing
// needs the GPU. 1 when a binary failed to compile, else 0.
int compile_gemm_binaries_only(const std::vector<GemmTuningShape>& shapes, const GpuProfile& gpu,
                               const CompileSettings& settings,
                               const std::filesystem::path& database,
                               const std::optional<GpuProfile>& present);

// The sweep's tables (README.md, sweep.csv) into `out_dir` (empty:
// bench/results/gemm-sweep-<gpu>), from what the database holds after the run.
void write_gemm_sweep(const GemmTuningPlan& plan, const GemmTuningSummary& summary,
                      std::filesystem::path out_dir);

}  // namespace swr
