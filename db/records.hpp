// The values the results database stores and hands back, as C++ types: row ids, GPUs,
// measurements (with their status), model predictions, tuned shapes, and measurements named by
// identity for import and export.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::db {

// Row ids of the results database, as distinct types so that a GPU id cannot be passed where a
// problem id is expected. They are only meaningful within one database file.
enum class GpuId : std::int64_t {};
enum class ProblemId : std::int64_t {};
enum class ConfigId : std::int64_t {};

inline std::int64_t raw(GpuId id) {
  return static_cast<std::int64_t>(id);
}
inline std::int64_t raw(ProblemId id) {
  return static_cast<std::int64_t>(id);
}
inline std::int64_t raw(ConfigId id) {
  return static_cast<std::int64_t>(id);
}

// A GPU as the results database knows it. The identity is the hardware (name, arch, SM count,
// L2 size, device name): a driver or CUDA upgrade keeps the GPU's results, and the versions seen
// last are kept beside it (each measurement also stores the versions it ran under).
struct GpuRecord {
  std::string name;  // profile name: "h200", "gb10", ...
  std::string arch;  // "sm_90a"
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  std::string device_name;  // the device's own name, or the profile's description without one
  std::string driver_version;
  std::string cuda_version;

  // Name, arch, SM count, L2 size and device name (the profile's description) from a profile;
  // the versions are left for the caller to fill.
  static GpuRecord from_profile(const GpuProfile& profile);

  bool operator==(const GpuRecord&) const = default;
};

struct StoredGpu {
  GpuId id{};
  GpuRecord gpu;
};

// The outcome of measuring one variant. Failures are results too: they are stored (so a resumed
// run does not retry them) and are never chosen as best.
enum class MeasurementStatus {
  ok,             // verified against the reference and timed
  wrong_result,   // ran, but the output failed the comparison (NaN included)
  compile_error,  // NVRTC refused the source
  launch_error,   // the driver refused to load or launch it
  fault,          // illegal address, trap, ... (the worker's context died)
  timeout,        // ran past the time limit
};

std::string_view to_string(MeasurementStatus status);
std::optional<MeasurementStatus> parse_measurement_status(std::string_view text);

// Whether a row has hardware counters, and why not (schema version 6: measurements.counter_status,
// with a note in counter_note).
enum class CounterStatus {
  collected,          // the CUPTI counters of this very run of the variant are in the row
  skipped_by_policy,  // --counters none, or top and the variant was not among the best
  unavailable,        // the profiler could not be used (permissions, busy, no CUPTI): the note says
  failed,             // the profiler ran but gave nothing for this variant (the note says why)
  not_reached,        // the variant failed before its counters (compile error, wrong result, ...)
};

std::string_view to_string(CounterStatus status);
std::optional<CounterStatus> parse_counter_status(std::string_view text);

struct MeasurementRecord;
// The status of a row recorded without one (before schema version 6, or a record made without
// it): collected when it holds any counter, not_reached when it failed, else unavailable.
CounterStatus derived_counter_status(const MeasurementRecord& record);

// One measured variant: what the tuner records for a (gpu, problem, config) triple. Figures that
// may be missing (counters without profiling permission, times of a failed variant) are optional.
// Rules record_measurement enforces: status ok needs a positive median_ms and no error text; any
// other status needs its error text (a failed variant may still carry a time, e.g. a wrong
// result); l2_hit_rate is a fraction; method is a JSON object; measured_at, when given, has the
// fixed UTC form below.
struct MeasurementRecord {
  GpuId gpu{};
  ProblemId problem{};
  ConfigId config{};

  MeasurementStatus status = MeasurementStatus::ok;
  std::string error;  // why it failed; empty for ok

  // Device-event times over `timed_runs` runs, each starting from the same L2 state.
  std::optional<double> median_ms;  // required when status is ok
  std::optional<double> p95_ms;
  std::optional<double> min_ms;
  std::optional<int> timed_runs;
  std::optional<double> tflops;          // from the median time
  std::optional<double> relative_error;  // against the fp32 reference (SQLite stores NaN as NULL)

  // Hardware counters (CUPTI range profiler); missing when profiling is unavailable.
  std::optional<double> l2_sectors_from_tex;  // L2 sectors requested by L1/TEX
  std::optional<double> l2_sector_misses;
  std::optional<double> l2_hit_rate;  // fraction in [0, 1], not percent
  std::optional<double> dram_read_bytes;
  std::optional<double> dram_write_bytes;
  // Whether the counters above are there and why not; unset: derived_counter_status on insert
  // (and on reading a row stored before schema version 6).
  std::optional<CounterStatus> counter_status;
  std::string counter_note;  // why they are missing, in words (empty when collected)

  // Derived figures.
  std::optional<double> observed_intensity;     // FLOPs / DRAM bytes measured
  std::optional<double> algorithmic_intensity;  // FLOPs / compulsory bytes
  std::optional<double> roofline_fraction;      // achieved / roofline ceiling

  // Resources of the compiled kernel.
  std::optional<int> registers;
  std::optional<int> spill_bytes;
  std::optional<int> dynamic_shared_bytes;
  std::optional<int> blocks_per_sm;

  nlohmann::json method = nlohmann::json::object();  // how it was timed and counted
  std::string source_hash;                           // the cubin cache key of the variant
  std::string toolkit_version;                       // NVRTC version that compiled it
  std::string driver_version;                        // driver it ran under
  // UTC, "YYYY-MM-DDTHH:MM:SS.mmmZ". Empty when recording: the database's clock fills it in.
  std::string measured_at;
};

// A measurement as read back, with the config it measured.
struct StoredMeasurement {
  std::int64_t id = 0;
  std::string config_key;
  nlohmann::json config_json;
  MeasurementRecord record;
};

// A model's prediction for a (gpu, problem, config) triple: kept in its own table, so that a
// figure from the L2 model is never mistaken for a measurement.
struct PredictionRecord {
  GpuId gpu{};
  ProblemId problem{};
  ConfigId config{};

  std::string model_name;     // e.g. "closed_form", "schedule_simulator"
  std::string model_version;  // changes whenever the model's answers may change

  std::optional<double> requested_sectors;  // L2 sectors requested
  std::optional<double> sector_misses;
  std::optional<double> hit_rate;  // fraction in [0, 1]
  std::optional<double> dram_bytes;
  std::optional<double> predicted_ms;
  std::optional<double> predicted_tflops;
  bool sampled = false;  // some rounds were simulated and the rest extrapolated
  std::string note;
  // UTC, "YYYY-MM-DDTHH:MM:SS.mmmZ". Empty when recording: the database's clock fills it in.
  std::string predicted_at;
};

struct StoredPrediction {
  std::int64_t id = 0;
  std::string config_key;
  nlohmann::json config_json;
  PredictionRecord record;
};

// A shape that has at least one valid measurement on a GPU: what the runtime's nearest-shape
// lookup and `swr-tune export` walk, per family.
template <class Problem>
struct TunedShapeOf {
  ProblemId id{};
  Problem problem;
};

using TunedShape = TunedShapeOf<AttentionProblem>;
using TunedGemmShape = TunedShapeOf<GemmProblem>;

// A measurement with its GPU, problem and config named by identity instead of row ids, so that it
// can move from one results database into another (import) or into an export manifest. Row ids
// mean nothing outside their file; identities (GPU hardware, problem key, config key) do.
struct PortableMeasurement {
  GpuRecord gpu;
  // Of one family: an AttentionProblem with an AttentionConfig, a GemmProblem with a GemmConfig,
  // or an AttentionBackwardProblem with an AttentionBackwardConfig (import refuses a mixed pair).
  std::variant<AttentionProblem, GemmProblem, AttentionBackwardProblem> problem;
  std::variant<AttentionConfig, GemmConfig, AttentionBackwardConfig> config;
  // The figures; its ids are ignored, measured_at must be set (the time is part of the fact).
  MeasurementRecord record;
};

// The family's name ("attention", "gemm", "attention-backward") and the problem's key.
const char* family_of(const PortableMeasurement& measurement);
std::string problem_key(const PortableMeasurement& measurement);

// What an import did.
struct ImportCounts {
  std::size_t added = 0;            // measurements written
  std::size_t already_present = 0;  // identical measurements the database held already
};

}  // namespace swr::db
