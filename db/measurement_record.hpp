// One measured variant: what the tuner records for a (gpu, problem, config) triple. Figures that
// may be missing (counters without profiling permission, times of a failed variant) are optional.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "db/database_ids.hpp"
#include "db/measurement_status.hpp"

namespace swr::db {

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

}  // namespace swr::db
