#include "tuner/tuning/gemm_variant_record.hpp"

namespace swr {

double gemm_tflops(const GemmProblem& problem, double median_ms) {
  return problem.flops() / (median_ms * 1e-3) / 1e12;
}

db::MeasurementRecord gemm_measurement_record(const VariantRecordContext& context,
                                              const GemmProblem& problem, const GpuProfile& gpu,
                                              const KernelSource& source,
                                              const CompiledKernel& kernel,
                                              const VariantOutcome& outcome,
                                              const GemmBaseline& baseline) {
  db::MeasurementRecord record =
      measured_variant_record(context, problem_work(problem), gpu, source, kernel, outcome);
  record.method["kernel_binary"] = source.name;
  if (baseline.median_ms) {
    record.method["cublas_median_ms"] = *baseline.median_ms;
    record.method["cublas_version"] = baseline.version;
  } else {
    record.method["cublas"] = baseline.note;
  }
  return record;
}

GemmBaseline stored_gemm_baseline(const std::vector<db::StoredMeasurement>& measurements) {
  GemmBaseline baseline;
  for (const db::StoredMeasurement& measurement : measurements) {
    const auto found = measurement.record.method.find("cublas_median_ms");
    if (found != measurement.record.method.end() && found->is_number()) {
      baseline.median_ms = found->get<double>();
      baseline.version = measurement.record.method.value("cublas_version", std::string());
      break;
    }
  }
  return baseline;
}

db::MeasurementRecord gemm_compile_failure_record(const VariantRecordContext& context,
                                                  const std::string& arch,
                                                  const KernelSource& source,
                                                  const CompiledKernel& kernel) {
  return compile_failure_record(context, arch, source, kernel, "[log cut]");
}

}  // namespace swr
