// ResultsDatabase: recording measurements and reading them back (resume, best, listings).
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>
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

std::vector<ConfigTime> ResultsDatabase::config_times(GpuId gpu, ProblemId problem) const {
  // Every run of the (gpu, problem), a config's newest first: the newest names the build that
  // counts and whether the config counts at all.
  StatementLease lease = statements_->lease(
      "SELECT m.id, m.median_ms, m.status = 'ok', m.source_hash, c.key FROM measurements AS m"
      " JOIN configs AS c ON c.id = m.config_id WHERE m.gpu_id = ? AND m.problem_id = ?"
      " ORDER BY c.key, m.measured_at DESC, m.id DESC");
  SQLite::Statement& query = lease.statement();
  ParameterBinder(query).add(raw(gpu)).add(raw(problem));
  std::vector<ConfigTime> times;
  std::optional<std::string> key;  // of the config being read
  std::string build;
  bool counts = false;
  std::vector<std::pair<double, std::int64_t>> runs;  // the counted build's valid runs
  const auto close_config = [&] {
    if (!counts || runs.empty()) return;
    std::sort(runs.begin(), runs.end());
    const auto& [median_ms, id] = runs[(runs.size() - 1) / 2];  // the lower median
    times.push_back({*key, id, median_ms, static_cast<int>(runs.size())});
  };
  while (query.executeStep()) {
    const std::string row_key = query.getColumn(4).getString();
    const bool valid = query.getColumn(2).getInt() != 0;
    if (row_key != key) {
      close_config();
      key = row_key;
      build = query.getColumn(3).getString();
      counts = valid;
      runs.clear();
    }
    if (counts && valid && query.getColumn(3).getString() == build) {
      runs.emplace_back(query.getColumn(1).getDouble(), query.getColumn(0).getInt64());
    }
  }
  close_config();
  return times;
}

std::optional<StoredMeasurement> ResultsDatabase::best_for(GpuId gpu, ProblemId problem) const {
  // The one rule for "the best variant" (README: show, query, export, the runtime and the bench
  // all use it): config_times' smallest, equal times to the smaller config key, which is the same
  // in every database (row ids are not). Most configs were measured once, and their time is the
  // current one: then the speed index gives the best in one seek.
  std::optional<std::int64_t> best_id;
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
  if (!any_repeated) {
    StatementLease lease = statements_->lease(
        "SELECT measurement_id FROM current_measurements"
        " WHERE gpu_id = ? AND problem_id = ? AND valid = 1 ORDER BY median_ms, config_key"
        " LIMIT 1");
    SQLite::Statement& query = lease.statement();
    ParameterBinder(query).add(raw(gpu)).add(raw(problem));
    if (query.executeStep()) best_id = query.getColumn(0).getInt64();
  } else {
    const std::vector<ConfigTime> times = config_times(gpu, problem);
    const auto best =
        std::min_element(times.begin(), times.end(), [](const ConfigTime& a, const ConfigTime& b) {
          return a.median_ms != b.median_ms ? a.median_ms < b.median_ms
                                            : a.config_key < b.config_key;
        });
    if (best != times.end()) best_id = best->measurement_id;
  }
  if (!best_id) return std::nullopt;
  StatementLease lease = statements_->lease("SELECT " + measurement_row_columns(schema_version_) +
                                            " FROM measurements AS m"
                                            " JOIN configs AS c ON c.id = m.config_id"
                                            " WHERE m.id = ?");
  lease.statement().bind(1, *best_id);
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
