// The columns every stored row about one variant starts with, a measurement's as a prediction's:
// its id, its config's key and JSON, and the (gpu, problem, config) it belongs to. Their queries
// select them first, as "x.id, c.key, c.json, x.gpu_id, x.problem_id, x.config_id".
#pragma once

#include <nlohmann/json.hpp>

#include "db/database_ids.hpp"
#include "db/sqlite_values.hpp"

namespace swr::db {

// Reads those six columns into `stored` (StoredMeasurement, StoredPrediction).
template <class Stored>
void read_variant_row_head(ColumnReader& columns, Stored& stored) {
  stored.id = columns.int64();
  stored.config_key = columns.text();
  stored.config_json = nlohmann::json::parse(columns.text());
  stored.record.gpu = GpuId{columns.int64()};
  stored.record.problem = ProblemId{columns.int64()};
  stored.record.config = ConfigId{columns.int64()};
}

}  // namespace swr::db
