// ResultsDatabase: model predictions, in their own table and never in a measurement query.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <stdexcept>
#include <vector>

#include "db/results_database.hpp"
#include "db/sqlite_access.hpp"

namespace swr::db {
namespace {

void require_valid(const PredictionRecord& record) {
  if (record.model_name.empty()) throw std::invalid_argument("a prediction needs a model name");
  if (record.hit_rate && !(*record.hit_rate >= 0 && *record.hit_rate <= 1)) {
    throw std::invalid_argument("a predicted hit_rate is a fraction in [0, 1] (got " +
                                std::to_string(*record.hit_rate) + ")");
  }
}

StoredPrediction read_prediction(SQLite::Statement& query) {
  ColumnReader columns(query);
  StoredPrediction stored;
  read_variant_row_head(columns, stored);
  PredictionRecord& record = stored.record;
  record.model_name = columns.text();
  record.model_version = columns.text();
  record.requested_sectors = columns.optional_real();
  record.sector_misses = columns.optional_real();
  record.hit_rate = columns.optional_real();
  record.dram_bytes = columns.optional_real();
  record.predicted_ms = columns.optional_real();
  record.predicted_tflops = columns.optional_real();
  record.sampled = columns.boolean();
  record.note = columns.text();
  record.predicted_at = columns.text();
  return stored;
}

}  // namespace

std::int64_t ResultsDatabase::record_prediction(const PredictionRecord& record) {
  return record_predictions({record}).front();
}

std::vector<std::int64_t> ResultsDatabase::record_predictions(
    const std::vector<PredictionRecord>& records) {
  require_writable("record_predictions");
  for (const PredictionRecord& record : records) require_valid(record);
  // One transaction for the whole set: a process killed while writing leaves the earlier set (or
  // none), never a part that `show` would present as all the model predicted.
  SQLite::Transaction transaction(*database_, SQLite::TransactionBehavior::IMMEDIATE);
  StatementLease insert_lease = statements_->lease(
      "INSERT INTO predictions (gpu_id, problem_id, config_id, model_name, model_version,"
      " requested_sectors, sector_misses, hit_rate, dram_bytes, predicted_ms, predicted_tflops,"
      " sampled, note, predicted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
      " COALESCE(?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))");
  SQLite::Statement& insert = insert_lease.statement();
  std::vector<std::int64_t> ids;
  ids.reserve(records.size());
  for (const PredictionRecord& record : records) {
    insert.reset();
    insert.clearBindings();
    ParameterBinder(insert)
        .add(raw(record.gpu))
        .add(raw(record.problem))
        .add(raw(record.config))
        .add(record.model_name)
        .add(record.model_version)
        .add(record.requested_sectors)
        .add(record.sector_misses)
        .add(record.hit_rate)
        .add(record.dram_bytes)
        .add(record.predicted_ms)
        .add(record.predicted_tflops)
        .add(record.sampled)
        .add(record.note)
        .add_text_or_null(record.predicted_at);
    insert.exec();
    ids.push_back(database_->getLastInsertRowid());
  }
  transaction.commit();
  return ids;
}

std::vector<StoredPrediction> ResultsDatabase::predictions_for(GpuId gpu, ProblemId problem) const {
  StatementLease query_lease = statements_->lease(
      "SELECT p.id, c.key, c.json, p.gpu_id, p.problem_id, p.config_id, p.model_name,"
      " p.model_version, p.requested_sectors, p.sector_misses, p.hit_rate, p.dram_bytes,"
      " p.predicted_ms, p.predicted_tflops, p.sampled, p.note, p.predicted_at"
      " FROM latest_predictions AS p JOIN configs AS c ON c.id = p.config_id"
      " WHERE p.gpu_id = ? AND p.problem_id = ?"
      " ORDER BY p.model_name, p.predicted_ms IS NULL, p.predicted_ms, c.key");
  SQLite::Statement& query = query_lease.statement();
  ParameterBinder(query).add(raw(gpu)).add(raw(problem));
  std::vector<StoredPrediction> predictions;
  while (query.executeStep()) predictions.push_back(read_prediction(query));
  return predictions;
}

}  // namespace swr::db
