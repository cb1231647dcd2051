// ResultsDatabase: recording measurements and reading them back (resume, best, listings).
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <cmath>
#include <stdexcept>

#include "db/measurement_rows.hpp"
#include "db/results_database.hpp"
#include "db/sqlite_access.hpp"

namespace swr::db {
namespace {

void require_valid(const MeasurementRecord& record) {
  const std::string status(to_string(record.status));
  if (record.status == MeasurementStatus::ok) {
    if (!record.median_ms || !std::isfinite(*record.median_ms) || *record.median_ms <= 0) {
      throw std::invalid_argument("a measurement with status ok needs a positive median time");
    }
    if (!record.error.empty()) {
      throw std::invalid_argument("a measurement with status ok carries no error text");
    }
  } else if (record.error.empty()) {
    throw std::invalid_argument("a measurement with status " + status + " needs its error text");
  }
  if (record.l2_hit_rate && !(*record.l2_hit_rate >= 0 && *record.l2_hit_rate <= 1)) {
    throw std::invalid_argument("l2_hit_rate is a fraction in [0, 1] (got " +
                                std::to_string(*record.l2_hit_rate) + ")");
  }
  if (!record.method.is_object()) {
    throw std::invalid_argument("the measurement method must be a JSON object");
  }
}

std::string key_of_config(StatementCache& statements, std::int64_t config) {
  StatementLease lease = statements.lease("SELECT key FROM configs WHERE id = ?");
  lease.statement().bind(1, config);
  lease.statement().executeStep();
  return lease.statement().getColumn(0).getString();
}

}  // namespace

std::int64_t ResultsDatabase::record_measurement(const MeasurementRecord& record) {
  require_writable("record_measurement");
  require_valid(record);
  SQLite::Transaction transaction(*database_, SQLite::TransactionBehavior::IMMEDIATE);
  insert_measurement_row(*statements_, record);
  const std::int64_t id = database_->getLastInsertRowid();
  transaction.commit();
  return id;
}

std::set<std::string> ResultsDatabase::measured_config_keys(GpuId gpu, ProblemId problem) const {
  StatementLease query_lease = statements_->lease(
      "SELECT config_key FROM current_measurements"
      " WHERE gpu_id = ? AND problem_id = ?");
  SQLite::Statement& query = query_lease.statement();
  ParameterBinder(query).add(raw(gpu)).add(raw(problem));
  std::set<std::string> keys;
  while (query.executeStep()) keys.insert(query.getColumn(0).getString());
  return keys;
}

std::optional<StoredMeasurement> ResultsDatabase::best_for(GpuId gpu, ProblemId problem) const {
  // The one rule for "the best variant" (README: show, query, export, the runtime and the bench
  // all use it). Per config, its newest measurement says whether it is valid and which build
  // (source hash) counts; its time is the fastest valid measurement of that build (interference
  // only slows a run down). Equal times go to the smaller config key, which is the same in every
  // database (row ids are not). Most configs were measured once, and their time is the current
  // one: the speed index gives the fastest of those in one seek, and only the configs measured
  // more than once need a look at their history.
  std::int64_t best_id = 0;
  double best_ms = 0;
  std::int64_t best_config = 0;
  std::string best_key;  // of best_config; empty until a tie needs it
  {
    StatementLease lease = statements_->lease(
        "SELECT measurement_id, median_ms, config_key, config_id FROM current_measurements"
        " WHERE gpu_id = ? AND problem_id = ? AND valid = 1 ORDER BY median_ms, config_key"
        " LIMIT 1");
    SQLite::Statement& query = lease.statement();
    ParameterBinder(query).add(raw(gpu)).add(raw(problem));
    if (!query.executeStep()) return std::nullopt;
    best_id = query.getColumn(0).getInt64();
    best_ms = query.getColumn(1).getDouble();
    best_key = query.getColumn(2).getString();
    best_config = query.getColumn(3).getInt64();
  }
  bool any_repeated = false;  // a config measured more than once
  {
    // Index only (measurements_by_triple), in config order: repeats are neighbours.
    StatementLease lease = statements_->lease(
        "SELECT config_id FROM measurements WHERE gpu_id = ? AND problem_id = ?"
        " ORDER BY config_id");
    ParameterBinder(lease.statement()).add(raw(gpu)).add(raw(problem));
    std::int64_t previous = -1;
    while (!any_repeated && lease.statement().executeStep()) {
      const std::int64_t config = lease.statement().getColumn(0).getInt64();
      any_repeated = config == previous;
      previous = config;
    }
  }
  if (any_repeated) {
    // The older runs of the repeated configs; a config's rows come newest first, and the newest
    // names the build that counts (its own time is among the current ones looked at above).
    StatementLease lease = statements_->lease(
        "SELECT id, median_ms, config_id, status = 'ok', source_hash FROM measurements"
        " WHERE gpu_id = ? AND problem_id = ? ORDER BY config_id, measured_at DESC, id DESC");
    SQLite::Statement& query = lease.statement();
    ParameterBinder(query).add(raw(gpu)).add(raw(problem));
    std::int64_t config = -1;
    std::string build;
    bool newest_valid = false;
    while (query.executeStep()) {
      const std::int64_t row_config = query.getColumn(2).getInt64();
      const bool valid = query.getColumn(3).getInt() != 0;
      if (row_config != config) {
        config = row_config;
        build = query.getColumn(4).getString();
        newest_valid = valid;
        continue;
      }
      if (!newest_valid || !valid || query.getColumn(4).getString() != build) {
        continue;  // a failed config, a failed run, or another build
      }
      const double median_ms = query.getColumn(1).getDouble();
      if (median_ms > best_ms) continue;
      if (median_ms == best_ms) {  // a tie: the keys decide, read only now (ties are rare)
        if (best_key.empty()) best_key = key_of_config(*statements_, best_config);
        if (key_of_config(*statements_, config) >= best_key) continue;
      }
      best_id = query.getColumn(0).getInt64();
      best_ms = median_ms;
      best_config = config;
      best_key.clear();
    }
  }
  StatementLease lease = statements_->lease("SELECT " + measurement_row_columns(schema_version_) +
                                            " FROM measurements AS m"
                                            " JOIN configs AS c ON c.id = m.config_id"
                                            " WHERE m.id = ?");
  lease.statement().bind(1, best_id);
  lease.statement().executeStep();
  return read_measurement_row(lease.statement());
}

std::vector<StoredMeasurement> ResultsDatabase::measurements_for(GpuId gpu,
                                                                 ProblemId problem) const {
  StatementLease query_lease =
      statements_->lease("SELECT " + measurement_row_columns(schema_version_) +
                         " FROM current_measurements AS cur"
                         " JOIN measurements AS m ON m.id = cur.measurement_id"
                         " JOIN configs AS c ON c.id = cur.config_id"
                         " WHERE cur.gpu_id = ? AND cur.problem_id = ?"
                         " ORDER BY cur.valid DESC, cur.median_ms, m.status,"
                         " cur.config_key");
  SQLite::Statement& query = query_lease.statement();
  ParameterBinder(query).add(raw(gpu)).add(raw(problem));
  std::vector<StoredMeasurement> measurements;
  while (query.executeStep()) measurements.push_back(read_measurement_row(query));
  return measurements;
}

std::vector<ProblemSummary> ResultsDatabase::problem_summaries(std::optional<GpuId> gpu) const {
  StatementLease query_lease = statements_->lease(
      "SELECT cur.gpu_id, cur.problem_id, COUNT(*), SUM(1 - cur.valid)"
      " FROM current_measurements AS cur"
      " JOIN gpus AS g ON g.id = cur.gpu_id"
      " JOIN problems AS p ON p.id = cur.problem_id"
      " LEFT JOIN attention_problems AS a ON a.problem_id = p.id"
      " WHERE ?1 IS NULL OR cur.gpu_id = ?1"
      " GROUP BY cur.gpu_id, cur.problem_id"
      " ORDER BY g.name, g.id, p.family, a.head_dim, a.dtype, a.causal,"
      " a.seq_kv, a.seq_q, a.batch, a.heads, p.key");
  SQLite::Statement& query = query_lease.statement();
  if (gpu) {
    query.bind(1, raw(*gpu));
  } else {
    query.bind(1);
  }
  std::vector<ProblemSummary> summaries;
  while (query.executeStep()) {
    ColumnReader columns(query);
    const GpuId gpu_id{columns.int64()};
    const ProblemId problem_id{columns.int64()};
    ProblemSummary summary;
    summary.variants_measured = columns.integer();
    summary.variants_failed = columns.integer();
    summary.gpu = this->gpu(gpu_id);
    summary.problem = problem(problem_id);
    summary.best = best_for(gpu_id, problem_id);
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

}  // namespace swr::db
