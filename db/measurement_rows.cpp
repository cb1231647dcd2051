#include "db/measurement_rows.hpp"

#include <stdexcept>

#include "db/sqlite_values.hpp"

namespace swr::db {

const char* const kMeasurementRowColumns =
    "m.id, c.key, c.json, m.gpu_id, m.problem_id, m.config_id, m.status, m.error,"
    " m.median_ms, m.p95_ms, m.min_ms, m.timed_runs, m.tflops, m.relative_error,"
    " m.l2_sectors_from_tex, m.l2_sector_misses, m.l2_hit_rate, m.dram_read_bytes,"
    " m.dram_write_bytes, m.observed_intensity, m.algorithmic_intensity, m.roofline_fraction,"
    " m.registers, m.spill_bytes, m.dynamic_shared_bytes, m.blocks_per_sm, m.method,"
    " m.source_hash, m.toolkit_version, m.driver_version, m.measured_at";

StoredMeasurement read_measurement_row(SQLite::Statement& query) {
  ColumnReader columns(query);
  StoredMeasurement stored;
  stored.id = columns.int64();
  stored.config_key = columns.text();
  stored.config_json = nlohmann::json::parse(columns.text());
  MeasurementRecord& record = stored.record;
  record.gpu = GpuId{columns.int64()};
  record.problem = ProblemId{columns.int64()};
  record.config = ConfigId{columns.int64()};
  const std::string status = columns.text();
  const std::optional<MeasurementStatus> parsed = parse_measurement_status(status);
  if (!parsed) throw std::runtime_error("unknown measurement status '" + status + "'");
  record.status = *parsed;
  record.error = columns.text();
  record.median_ms = columns.optional_real();
  record.p95_ms = columns.optional_real();
  record.min_ms = columns.optional_real();
  record.timed_runs = columns.optional_integer();
  record.tflops = columns.optional_real();
  record.relative_error = columns.optional_real();
  record.l2_sectors_from_tex = columns.optional_real();
  record.l2_sector_misses = columns.optional_real();
  record.l2_hit_rate = columns.optional_real();
  record.dram_read_bytes = columns.optional_real();
  record.dram_write_bytes = columns.optional_real();
  record.observed_intensity = columns.optional_real();
  record.algorithmic_intensity = columns.optional_real();
  record.roofline_fraction = columns.optional_real();
  record.registers = columns.optional_integer();
  record.spill_bytes = columns.optional_integer();
  record.dynamic_shared_bytes = columns.optional_integer();
  record.blocks_per_sm = columns.optional_integer();
  record.method = nlohmann::json::parse(columns.text());
  record.source_hash = columns.text();
  record.toolkit_version = columns.text();
  record.driver_version = columns.text();
  record.measured_at = columns.text();
  return stored;
}

}  // namespace swr::db
