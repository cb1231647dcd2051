// Turning what measuring (or compiling) a variant gave into the database row: the derived figures
// (TFLOP/s, arithmetic intensities, fraction of the roofline) and the versions it ran under.
#pragma once

#include <optional>
#include <string>

#include "db/measurement_record.hpp"
#include "generator/parallel_compiler.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/counters/l2_counters.hpp"
#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

// What attention must move at least: Q, K and V read once, O written once.
double compulsory_attention_bytes(const AttentionProblem& problem);

struct DerivedFigures {
  std::optional<double> tflops;
  std::optional<double> algorithmic_intensity;  // FLOPs / compulsory bytes
  std::optional<double> observed_intensity;     // FLOPs / DRAM bytes read and written
  // The roofline time, max(FLOPs / peak, DRAM bytes / bandwidth) with the measured DRAM bytes
  // (the compulsory ones without counters), over the measured median: 1 is the ceiling.
  std::optional<double> roofline_fraction;
};

DerivedFigures derive_figures(const AttentionProblem& problem, const GpuProfile& gpu,
                              std::optional<double> median_ms, const L2Counters& counters);

// Where a record belongs and what produced the variant.
struct VariantRecordContext {
  db::GpuId gpu{};
  db::ProblemId problem{};
  db::ConfigId config{};
  std::string toolkit_version;  // NVRTC
  std::string driver_version;
};

// A measured variant. An outcome that claims ok without a timed run is recorded as a launch error.
db::MeasurementRecord measured_variant_record(const VariantRecordContext& context,
                                              const AttentionProblem& problem,
                                              const GpuProfile& gpu, const CompileResult& compiled,
                                              const VariantOutcome& outcome);

// A variant NVRTC refused: status compile_error with the head of its log.
db::MeasurementRecord compile_failure_record(const VariantRecordContext& context,
                                             const CompileResult& compiled);

inline constexpr std::size_t kMaximumStoredLogBytes = 16 * 1024;

}  // namespace swr
