// Turning what measuring (or compiling) a GEMM variant gave into the database row: TFLOP/s
// (2·m·n·k), intensities, the fraction of the roofline, the versions it ran under, and cuBLAS's
// time in the same run (method "cublas_median_ms"), so a stored row carries its own baseline.
#pragma once

#include <optional>
#include <string>

#include "db/measurement_record.hpp"
#include "generator/kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/tuning/variant_measurer.hpp"
#include "tuner/tuning/variant_record.hpp"  // VariantRecordContext

namespace swr {

// cuBLAS's median for the problem in this run, or why there is none ("cuBLAS not found").
struct GemmBaseline {
  std::optional<double> median_ms;
  std::string note;
  std::string version;
};

db::MeasurementRecord gemm_measurement_record(const VariantRecordContext& context,
                                              const GemmProblem& problem, const GpuProfile& gpu,
                                              const KernelSource& source,
                                              const CompiledKernel& kernel,
                                              const VariantOutcome& outcome,
                                              const GemmBaseline& baseline);

db::MeasurementRecord gemm_compile_failure_record(const VariantRecordContext& context,
                                                  const std::string& arch,
                                                  const KernelSource& source,
                                                  const CompiledKernel& kernel);

// TFLOP/s of a GEMM run.
double gemm_tflops(const GemmProblem& problem, double median_ms);

}  // namespace swr
