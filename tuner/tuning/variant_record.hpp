// A variant's database row, the same for every family: the work its problem asks of the GPU
// (FLOPs and compulsory bytes), status rules, timing statistics, counters, the derived figures
// (TFLOP/s, intensities, fraction of the roofline), the kernel's resources and the versions it ran
// under; then what each family adds: the attention row says which bytes its roofline counted, the
// GEMM row carries the kernel binary it ran and cuBLAS's time in the same run (method
// "cublas_median_ms"), so that a stored row carries its own baseline.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/records.hpp"
#include "generator/kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/parallel_compiler.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/counters/l2_metric_set.hpp"
#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

// The work a problem asks of the GPU, whatever its family: its FLOPs and the bytes it must move at
// least (every input read once, the output written once). The derived figures of a record, the
// roofline and the worker's time limits all start from these two numbers.
struct ProblemWork {
  double flops = 0;
  double compulsory_bytes = 0;
};

// Q, K and V read once, O written once.
double compulsory_attention_bytes(const AttentionProblem& problem);

ProblemWork problem_work(const AttentionProblem& problem);
// Q, K, V, O, dO and L read once, dQ, dK and dV written once; 2.5x the forward's FLOPs.
ProblemWork problem_work(const AttentionBackwardProblem& problem);
// What a record's roofline counted when the DRAM counters are missing, in words.
std::string compulsory_bytes_note(const AttentionProblem& problem);
std::string compulsory_bytes_note(const AttentionBackwardProblem& problem);
ProblemWork problem_work(const GemmProblem& problem);  // A and B read once, C written once

// max(FLOPs / peak, bytes / bandwidth) on `gpu`: 0 where the profile knows neither rate.
double roofline_seconds(double flops, double bytes, const GpuProfile& gpu);

struct DerivedFigures {
  std::optional<double> tflops;
  std::optional<double> algorithmic_intensity;  // FLOPs / compulsory bytes
  std::optional<double> observed_intensity;     // FLOPs / DRAM bytes read and written
  // The roofline time, max(FLOPs / peak, DRAM bytes / bandwidth) with the measured DRAM bytes
  // (the compulsory ones without counters), over the measured median: 1 is the ceiling.
  std::optional<double> roofline_fraction;
};

DerivedFigures derive_figures(const ProblemWork& work, const GpuProfile& gpu,
                              std::optional<double> median_ms, const L2Counters& counters);

// Where a record belongs and what produced the variant.
struct VariantRecordContext {
  db::GpuId gpu{};
  db::ProblemId problem{};
  db::ConfigId config{};
  std::string toolkit_version;  // NVRTC
  std::string driver_version;
};

// Where a measured variant's host time went, from its method's host_ms: the check and the timed
// runs, its L2 counters (its share of a batch's profiling sessions, or its own session), the wait
// for the host's profiler before them, loading.
struct VariantTime {
  double timing_ms = 0;
  double counters_ms = 0;
  double load_ms = 0;
  double profiler_wait_ms = 0;  // waiting for the host's profiler (another GPU's counters)
};
VariantTime variant_time(const nlohmann::json& method);

// Whether the record has counters and why not (db::CounterStatus), from its figures and the
// outcome: collected, not_reached (the variant failed first), skipped_by_policy, unavailable (the
// profiler's reason as its note) or failed (why, as its note).
void set_counter_status(db::MeasurementRecord& record, const VariantOutcome& outcome);

// A measured variant. An outcome that claims ok without a timed run is recorded as a launch error.
db::MeasurementRecord measured_variant_record(const VariantRecordContext& context,
                                              const ProblemWork& work, const GpuProfile& gpu,
                                              const KernelSource& source,
                                              const CompiledKernel& kernel,
                                              const VariantOutcome& outcome);

// A variant NVRTC refused: status compile_error with the head of its log, which ends in
// `cut_marker` when it is longer than kMaximumStoredLogBytes.
db::MeasurementRecord compile_failure_record(const VariantRecordContext& context,
                                             const std::string& arch, const KernelSource& source,
                                             const CompiledKernel& kernel,
                                             std::string_view cut_marker);

inline constexpr std::size_t kMaximumStoredLogBytes = 16 * 1024;

// An attention variant the parallel compiler produced: the shared record plus which bytes its
// roofline counted.
db::MeasurementRecord measured_variant_record(const VariantRecordContext& context,
                                              const AttentionProblem& problem,
                                              const GpuProfile& gpu, const CompileResult& compiled,
                                              const VariantOutcome& outcome);

// Its compile error, the log cut at kMaximumStoredLogBytes.
db::MeasurementRecord compile_failure_record(const VariantRecordContext& context,
                                             const CompileResult& compiled);

// A GEMM variant: the shared record plus the kernel binary it ran and the cuBLAS baseline.
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
