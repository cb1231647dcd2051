#include "db/measurement_rows.hpp"

#include <stdexcept>

#include "db/sqlite_access.hpp"

namespace swr::db {

std::string measurement_row_columns(int schema_version) {
  // Rows of a file before version 6 have no counter status: read as NULL, derived on reading.
  const char* const counter_columns =
      schema_version >= 6 ? ", m.counter_status, m.counter_note" : ", NULL, NULL";
  return std::string(
             "m.id, c.key, c.json, m.gpu_id, m.problem_id, m.config_id, m.status, m.error,"
             " m.median_ms, m.p95_ms, m.min_ms, m.timed_runs, m.tflops, m.relative_error,"
             " m.l2_sectors_from_tex, m.l2_sector_misses, m.l2_hit_rate, m.dram_read_bytes,"
             " m.dram_write_bytes, m.observed_intensity, m.algorithmic_intensity, "
             "m.roofline_fraction,"
             " m.registers, m.spill_bytes, m.dynamic_shared_bytes, m.blocks_per_sm, m.method,"
             " m.source_hash, m.toolkit_version, m.driver_version, m.measured_at") +
         counter_columns;
}

StoredMeasurement read_measurement_row(SQLite::Statement& query) {
  ColumnReader columns(query);
  StoredMeasurement stored;
  read_variant_row_head(columns, stored);
  MeasurementRecord& record = stored.record;
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
  const std::string counter_status = columns.text();
  record.counter_note = columns.text();
  if (counter_status.empty()) {
    record.counter_status = derived_counter_status(record);
  } else {
    record.counter_status = parse_counter_status(counter_status);
    if (!record.counter_status) {
      throw std::runtime_error("unknown counter status '" + counter_status + "'");
    }
  }
  return stored;
}

void insert_measurement_row(StatementCache& statements, const MeasurementRecord& record) {
  StatementLease insert_lease = statements.lease(
      "INSERT INTO measurements (gpu_id, problem_id, config_id, status, error, median_ms, p95_ms,"
      " min_ms, timed_runs, tflops, relative_error, l2_sectors_from_tex, l2_sector_misses,"
      " l2_hit_rate, dram_read_bytes, dram_write_bytes, observed_intensity,"
      " algorithmic_intensity, roofline_fraction, registers, spill_bytes, dynamic_shared_bytes,"
      " blocks_per_sm, method, source_hash, toolkit_version, driver_version, measured_at,"
      " counter_status, counter_note)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
      " COALESCE(?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), ?, ?)");
  SQLite::Statement& insert = insert_lease.statement();
  ParameterBinder(insert)
      .add(raw(record.gpu))
      .add(raw(record.problem))
      .add(raw(record.config))
      .add(std::string(to_string(record.status)))
      .add_text_or_null(record.error)
      .add(record.median_ms)
      .add(record.p95_ms)
      .add(record.min_ms)
      .add(record.timed_runs)
      .add(record.tflops)
      .add(record.relative_error)
      .add(record.l2_sectors_from_tex)
      .add(record.l2_sector_misses)
      .add(record.l2_hit_rate)
      .add(record.dram_read_bytes)
      .add(record.dram_write_bytes)
      .add(record.observed_intensity)
      .add(record.algorithmic_intensity)
      .add(record.roofline_fraction)
      .add(record.registers)
      .add(record.spill_bytes)
      .add(record.dynamic_shared_bytes)
      .add(record.blocks_per_sm)
      .add(record.method.dump())
      .add(record.source_hash)
      .add(record.toolkit_version)
      .add(record.driver_version)
      .add_text_or_null(record.measured_at)
      .add(std::string(to_string(record.counter_status.value_or(derived_counter_status(record)))))
      .add_text_or_null(record.counter_note);
  insert.exec();
}

}  // namespace swr::db
