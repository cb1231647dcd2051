#include "tuner/tuning/variant_record.hpp"

#include <algorithm>

#include "tuner/tuning/timing_statistics.hpp"

namespace swr {

double compulsory_attention_bytes(const AttentionProblem& problem) {
  const double element = static_cast<double>(element_bytes(problem.dtype));
  const double heads = static_cast<double>(problem.batch) * problem.heads * problem.head_dim;
  return heads * (2.0 * problem.seq_q + 2.0 * problem.seq_kv) * element;
}

DerivedFigures derive_figures(const AttentionProblem& problem, const GpuProfile& gpu,
                              std::optional<double> median_ms, const L2Counters& counters) {
  DerivedFigures figures;
  const double flops = problem.flops();
  figures.algorithmic_intensity = flops / compulsory_attention_bytes(problem);
  std::optional<double> dram_bytes;
  if (counters.dram_bytes_read && counters.dram_bytes_written) {
    dram_bytes = *counters.dram_bytes_read + *counters.dram_bytes_written;
    if (*dram_bytes > 0) figures.observed_intensity = flops / *dram_bytes;
  }
  if (!median_ms || *median_ms <= 0) return figures;
  const double seconds = *median_ms * 1e-3;
  figures.tflops = flops / seconds / 1e12;
  const double bytes = dram_bytes.value_or(compulsory_attention_bytes(problem));
  double roofline_seconds = 0;
  if (gpu.peak_tensor_flops > 0) roofline_seconds = flops / gpu.peak_tensor_flops;
  if (gpu.dram_bytes_per_second > 0) {
    roofline_seconds = std::max(roofline_seconds, bytes / gpu.dram_bytes_per_second);
  }
  if (roofline_seconds > 0) figures.roofline_fraction = roofline_seconds / seconds;
  return figures;
}

db::MeasurementRecord measured_variant_record(const VariantRecordContext& context,
                                              const AttentionProblem& problem,
                                              const GpuProfile& gpu, const CompileResult& compiled,
                                              const VariantOutcome& outcome) {
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

  std::optional<double> median_ms;
  if (!outcome.times_ms.empty()) {
    const TimingStatistics timing = summarize_timings(outcome.times_ms);
    median_ms = timing.median_ms;
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

  const DerivedFigures figures = derive_figures(problem, gpu, median_ms, counters);
  record.tflops = figures.tflops;
  record.algorithmic_intensity = figures.algorithmic_intensity;
  record.observed_intensity = figures.observed_intensity;
  record.roofline_fraction = figures.roofline_fraction;

  record.registers = outcome.registers;
  if (!record.registers && compiled.kernel.registers >= 0) {
    record.registers = compiled.kernel.registers;
  }
  record.spill_bytes = compiled.kernel.spill_bytes;
  record.dynamic_shared_bytes = compiled.source.dynamic_shared_bytes;
  record.blocks_per_sm = outcome.blocks_per_sm;

  record.method = outcome.method.is_object() ? outcome.method : nlohmann::json::object();
  if (!counters.dram_source.empty()) record.method["dram_source"] = counters.dram_source;
  record.method["roofline_bytes"] = counters.dram_bytes_read && counters.dram_bytes_written
                                        ? "measured DRAM bytes"
                                        : "compulsory bytes (Q, K, V, O once)";
  record.method["compiled_from_cache"] = compiled.kernel.from_cache;
  record.source_hash = compiled.kernel.cache_key;
  record.toolkit_version = context.toolkit_version;
  record.driver_version = context.driver_version;
  return record;
}

db::MeasurementRecord compile_failure_record(const VariantRecordContext& context,
                                             const CompileResult& compiled) {
  db::MeasurementRecord record;
  record.gpu = context.gpu;
  record.problem = context.problem;
  record.config = context.config;
  record.status = db::MeasurementStatus::compile_error;
  std::string log = compiled.kernel.log.empty() ? "NVRTC gave no log" : compiled.kernel.log;
  if (log.size() > kMaximumStoredLogBytes) {
    log.resize(kMaximumStoredLogBytes);
    log += "\n[log cut at " + std::to_string(kMaximumStoredLogBytes) + " bytes]";
  }
  record.error = "compile error: " + log;
  record.spill_bytes = compiled.kernel.spill_bytes;
  record.dynamic_shared_bytes = compiled.source.dynamic_shared_bytes;
  record.method = {{"compiler", "NVRTC " + context.toolkit_version},
                   {"arch", compiled.job.arch},
                   {"compile_seconds", compiled.kernel.compile_seconds}};
  record.source_hash = compiled.kernel.cache_key;
  record.toolkit_version = context.toolkit_version;
  record.driver_version = context.driver_version;
  return record;
}

}  // namespace swr
