#include "tuner/tuning/gemm_variant_record.hpp"

#include <algorithm>

#include "tuner/tuning/timing_statistics.hpp"

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
  db::MeasurementRecord record;
  record.gpu = context.gpu;
  record.problem = context.problem;
  record.config = context.config;
  record.status = outcome.status;
  record.error = outcome.error;
  if (record.status == db::MeasurementStatus::ok && outcome.times_ms.empty()) {
    record.status = db::MeasurementStatus::launch_error;
    record.error = "the measurement returned no timed run";
  }
  if (record.status != db::MeasurementStatus::ok && record.error.empty()) {
    record.error = std::string(db::to_string(record.status)) + " (no detail given)";
  }
  if (!outcome.times_ms.empty()) {
    const TimingStatistics timing = summarize_timings(outcome.times_ms);
    record.median_ms = timing.median_ms;
    record.p95_ms = timing.p95_ms;
    record.min_ms = timing.min_ms;
    record.timed_runs = timing.runs;
  }
  record.relative_error = outcome.relative_error;

  const L2Counters& counters = outcome.counters;
  record.l2_sectors_from_tex = counters.l2_sectors_from_tex;
  record.l2_sector_misses = counters.l2_sector_misses_from_tex;
  if (counters.l2_hit_rate_percent) {
    record.l2_hit_rate = std::clamp(*counters.l2_hit_rate_percent / 100.0, 0.0, 1.0);
  }
  record.dram_read_bytes = counters.dram_bytes_read;
  record.dram_write_bytes = counters.dram_bytes_written;

  const double flops = problem.flops();
  record.algorithmic_intensity = flops / problem.compulsory_bytes();
  std::optional<double> dram_bytes;
  if (counters.dram_bytes_read && counters.dram_bytes_written) {
    dram_bytes = *counters.dram_bytes_read + *counters.dram_bytes_written;
    if (*dram_bytes > 0) record.observed_intensity = flops / *dram_bytes;
  }
  if (record.median_ms && *record.median_ms > 0) {
    record.tflops = gemm_tflops(problem, *record.median_ms);
    double roofline_seconds = 0;
    if (gpu.peak_tensor_flops > 0) roofline_seconds = flops / gpu.peak_tensor_flops;
    if (gpu.dram_bytes_per_second > 0) {
      roofline_seconds =
          std::max(roofline_seconds,
                   dram_bytes.value_or(problem.compulsory_bytes()) / gpu.dram_bytes_per_second);
    }
    if (roofline_seconds > 0)
      record.roofline_fraction = roofline_seconds / (*record.median_ms * 1e-3);
  }

  record.registers = outcome.registers;
  if (!record.registers && kernel.registers >= 0) record.registers = kernel.registers;
  record.spill_bytes = kernel.spill_bytes;
  record.dynamic_shared_bytes = source.dynamic_shared_bytes;
  record.blocks_per_sm = outcome.blocks_per_sm;

  record.method = outcome.method.is_object() ? outcome.method : nlohmann::json::object();
  if (!counters.dram_source.empty()) record.method["dram_source"] = counters.dram_source;
  record.method["compiled_from_cache"] = kernel.from_cache;
  record.method["kernel_binary"] = source.name;
  if (baseline.median_ms) {
    record.method["cublas_median_ms"] = *baseline.median_ms;
    record.method["cublas_version"] = baseline.version;
  } else {
    record.method["cublas"] = baseline.note;
  }
  record.source_hash = kernel.cache_key;
  record.toolkit_version = context.toolkit_version;
  record.driver_version = context.driver_version;
  return record;
}

db::MeasurementRecord gemm_compile_failure_record(const VariantRecordContext& context,
                                                  const std::string& arch,
                                                  const KernelSource& source,
                                                  const CompiledKernel& kernel) {
  db::MeasurementRecord record;
  record.gpu = context.gpu;
  record.problem = context.problem;
  record.config = context.config;
  record.status = db::MeasurementStatus::compile_error;
  std::string log = kernel.log.empty() ? "NVRTC gave no log" : kernel.log;
  if (log.size() > kMaximumStoredLogBytes) {
    log.resize(kMaximumStoredLogBytes);
    log += "\n[log cut]";
  }
  record.error = "compile error: " + log;
  record.spill_bytes = kernel.spill_bytes;
  record.dynamic_shared_bytes = source.dynamic_shared_bytes;
  record.method = {{"compiler", "NVRTC " + context.toolkit_version},
                   {"arch", arch},
                   {"compile_seconds", kernel.compile_seconds}};
  record.source_hash = kernel.cache_key;
  record.toolkit_version = context.toolkit_version;
  record.driver_version = context.driver_version;
  return record;
}

}  // namespace swr
