#include "tuner/tuning/variant_record.hpp"

#include <algorithm>

#include "model/model_prediction.hpp"
#include "tuner/tuning/timing_statistics.hpp"

namespace swr {

DerivedFigures derive_figures(const ProblemWork& work, const GpuProfile& gpu,
                              std::optional<double> median_ms, const L2Counters& counters) {
  DerivedFigures figures;
  figures.algorithmic_intensity = work.flops / work.compulsory_bytes;
  std::optional<double> dram_bytes;
  if (counters.dram_bytes_read && counters.dram_bytes_written) {
    dram_bytes = *counters.dram_bytes_read + *counters.dram_bytes_written;
    if (*dram_bytes > 0) figures.observed_intensity = work.flops / *dram_bytes;
  }
  if (!median_ms || *median_ms <= 0) return figures;
  const double seconds = *median_ms * 1e-3;
  figures.tflops = work.flops / seconds / 1e12;
  const double roofline =
      roofline_seconds(work.flops, dram_bytes.value_or(work.compulsory_bytes), gpu);
  if (roofline > 0) figures.roofline_fraction = roofline / seconds;
  return figures;
}

db::MeasurementRecord measured_variant_record(const VariantRecordContext& context,
                                              const ProblemWork& work, const GpuProfile& gpu,
                                              const KernelSource& source,
                                              const CompiledKernel& kernel,
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
  set_counter_status(record, outcome);

  const DerivedFigures figures = derive_figures(work, gpu, record.median_ms, counters);
  record.tflops = figures.tflops;
  record.algorithmic_intensity = figures.algorithmic_intensity;
  record.observed_intensity = figures.observed_intensity;
  record.roofline_fraction = figures.roofline_fraction;

  record.registers = outcome.registers;
  if (!record.registers && kernel.registers >= 0) record.registers = kernel.registers;
  record.spill_bytes = kernel.spill_bytes;
  record.dynamic_shared_bytes = source.dynamic_shared_bytes;
  record.blocks_per_sm = outcome.blocks_per_sm;

  record.method = outcome.method.is_object() ? outcome.method : nlohmann::json::object();
  if (!counters.dram_source.empty()) record.method["dram_source"] = counters.dram_source;
  record.method["compiled_from_cache"] = kernel.from_cache;
  record.source_hash = kernel.cache_key;
  record.toolkit_version = context.toolkit_version;
  record.driver_version = context.driver_version;
  return record;
}

VariantTime variant_time(const nlohmann::json& method) {
  VariantTime time;
  const auto host_ms = method.find("host_ms");
  if (!method.is_object() || host_ms == method.end() || !host_ms->is_object()) return time;
  const auto number = [&](const char* name) {
    const auto found = host_ms->find(name);
    return found != host_ms->end() && found->is_number() ? found->get<double>() : 0.0;
  };
  time.counters_ms = number("counters");
  time.load_ms = number("load");
  time.profiler_wait_ms = number("profiler_wait");
  // Counted in the variant's own session, its counters are part of check_time_count; counted with
  // a batch (counter_batch), they came after it.
  const double check = number("check_time_count");
  time.timing_ms = method.contains("counter_batch")
                       ? check
                       : std::max(0.0, check - time.counters_ms - time.profiler_wait_ms);
  return time;
}

void set_counter_status(db::MeasurementRecord& record, const VariantOutcome& outcome) {
  using db::CounterStatus;
  record.counter_note.clear();
  if (db::derived_counter_status(record) == CounterStatus::collected) {
    record.counter_status = CounterStatus::collected;
  } else if (record.status != db::MeasurementStatus::ok) {
    record.counter_status = CounterStatus::not_reached;
  } else if (outcome.counters_skipped) {
    record.counter_status = CounterStatus::skipped_by_policy;
  } else if (!outcome.counters_unavailable.empty()) {
    record.counter_status = CounterStatus::unavailable;
    record.counter_note = outcome.counters_unavailable;
  } else {
    record.counter_status = CounterStatus::failed;
    record.counter_note = outcome.counters_failed.empty()
                              ? "the profiler returned no counter for this variant"
                              : outcome.counters_failed;
  }
}

db::MeasurementRecord compile_failure_record(const VariantRecordContext& context,
                                             const std::string& arch, const KernelSource& source,
                                             const CompiledKernel& kernel,
                                             std::string_view cut_marker) {
  db::MeasurementRecord record;
  record.gpu = context.gpu;
  record.problem = context.problem;
  record.config = context.config;
  record.status = db::MeasurementStatus::compile_error;
  std::string log = kernel.log.empty() ? "NVRTC gave no log" : kernel.log;
  if (log.size() > kMaximumStoredLogBytes) {
    log.resize(kMaximumStoredLogBytes);
    log += "\n";
    log += cut_marker;
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

double compulsory_attention_bytes(const AttentionProblem& problem) {
  const double element = static_cast<double>(element_bytes(problem.dtype));
  const double rows = static_cast<double>(problem.batch) * problem.head_dim;
  return rows *
         (2.0 * problem.heads * problem.seq_q + 2.0 * problem.kv_head_count() * problem.seq_kv) *
         element;
}

ProblemWork problem_work(const AttentionProblem& problem) {
  return {problem.flops(), compulsory_attention_bytes(problem)};
}

ProblemWork problem_work(const AttentionBackwardProblem& problem) {
  const AttentionProblem& shape = problem.shape;
  const double element = static_cast<double>(element_bytes(shape.dtype));
  const double query_rows = static_cast<double>(shape.batch) * shape.heads * shape.seq_q;
  const double key_rows = static_cast<double>(shape.batch) * shape.kv_head_count() * shape.seq_kv;
  // Q, O, dO, dQ and K, V, dK, dV, plus L.
  const double bytes = 4.0 * (query_rows + key_rows) * shape.head_dim * element + 4.0 * query_rows;
  return {problem.flops(), bytes};
}

std::string compulsory_bytes_note(const AttentionProblem&) {
  return "compulsory bytes (Q, K, V, O once)";
}

std::string compulsory_bytes_note(const AttentionBackwardProblem&) {
  return "compulsory bytes (Q, K, V, O, dO, L read once; dQ, dK, dV written once)";
}

ProblemWork problem_work(const GemmProblem& problem) {
  return {problem.flops(), problem.compulsory_bytes()};
}

double roofline_seconds(double flops, double bytes, const GpuProfile& gpu) {
  return model::roofline_estimate(flops, bytes, gpu).seconds;
}

db::MeasurementRecord measured_variant_record(const VariantRecordContext& context,
                                              const AttentionProblem& problem,
                                              const GpuProfile& gpu, const CompileResult& compiled,
                                              const VariantOutcome& outcome) {
  db::MeasurementRecord record = measured_variant_record(context, problem_work(problem), gpu,
                                                         compiled.source, compiled.kernel, outcome);
  const L2Counters& counters = outcome.counters;
  record.method["roofline_bytes"] = counters.dram_bytes_read && counters.dram_bytes_written
                                        ? std::string("measured DRAM bytes")
                                        : compulsory_bytes_note(problem);
  return record;
}

db::MeasurementRecord compile_failure_record(const VariantRecordContext& context,
                                             const CompileResult& compiled) {
  return compile_failure_record(
      context, compiled.job.arch, compiled.source, compiled.kernel,
      "[log cut at " + std::to_string(kMaximumStoredLogBytes) + " bytes]");
}

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
