// Turning what measuring (or compiling) a variant gave into its database row, the same for every
// family: status rules, timing statistics, counters, the derived figures (TFLOP/s, intensities,
// fraction of the roofline), the kernel's resources and the versions it ran under. A family adds
// its own method notes (attention_variant_record.hpp, gemm_variant_record.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "db/records.hpp"
#include "generator/kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/counters/l2_counters.hpp"
#include "tuner/tuning/problem_work.hpp"
#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

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

}  // namespace swr
