#include "tuner/tuning/attention_variant_record.hpp"

namespace swr {

db::MeasurementRecord measured_variant_record(const VariantRecordContext& context,
                                              const AttentionProblem& problem,
                                              const GpuProfile& gpu, const CompileResult& compiled,
                                              const VariantOutcome& outcome) {
  db::MeasurementRecord record = measured_variant_record(context, problem_work(problem), gpu,
                                                         compiled.source, compiled.kernel, outcome);
  const L2Counters& counters = outcome.counters;
  record.method["roofline_bytes"] = counters.dram_bytes_read && counters.dram_bytes_written
                                        ? "measured DRAM bytes"
                                        : "compulsory bytes (Q, K, V, O once)";
  return record;
}

db::MeasurementRecord compile_failure_record(const VariantRecordContext& context,
                                             const CompileResult& compiled) {
  return compile_failure_record(
      context, compiled.job.arch, compiled.source, compiled.kernel,
      "[log cut at " + std::to_string(kMaximumStoredLogBytes) + " bytes]");
}

}  // namespace swr
