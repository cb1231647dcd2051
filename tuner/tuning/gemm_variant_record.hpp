// A GEMM variant's database row: the shared record (variant_record.hpp) plus the kernel binary it
// ran and cuBLAS's time in the same run (method "cublas_median_ms"), so that a stored row carries
// its own baseline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "swr/gemm_problem.hpp"
#include "tuner/tuning/variant_record.hpp"

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

// The baseline stored rows carry: cuBLAS's time and version from the method of the first of
// `measurements` that has one; no time and an empty note when none does.
GemmBaseline stored_gemm_baseline(const std::vector<db::StoredMeasurement>& measurements);

// Its compile error. GEMM rows end a cut log in "[log cut]", as they always have.
db::MeasurementRecord gemm_compile_failure_record(const VariantRecordContext& context,
                                                  const std::string& arch,
                                                  const KernelSource& source,
                                                  const CompiledKernel& kernel);

// TFLOP/s of a GEMM run.
double gemm_tflops(const GemmProblem& problem, double median_ms);

}  // namespace swr
