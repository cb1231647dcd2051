// Reading a whole measurements row (with its config's key and JSON) out of a query, for every
// measurement query (results database, runtime, import); the column list and the reader go
// together.
#pragma once

#include <SQLiteCpp/Statement.h>

#include <string>

#include "db/records.hpp"

namespace swr::db {

// The columns read_measurement_row expects first, in order, in a file of `schema_version`; `m`
// names a measurements row and `c` its configs row.
std::string measurement_row_columns(int schema_version);

// Reads the columns of measurement_row_columns (starting at column 0). Throws std::runtime_error
// for a status this build does not know. A row without a counter status (before version 6) gets
// derived_counter_status.
StoredMeasurement read_measurement_row(SQLite::Statement& query);

class StatementCache;

// Inserts one measurements row as it is (no checks: the caller's job). An empty measured_at takes
// the database's clock.
void insert_measurement_row(StatementCache& statements, const MeasurementRecord& record);

}  // namespace swr::db
