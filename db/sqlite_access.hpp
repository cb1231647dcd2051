// How the db code talks to SQLite: prepared statements kept per connection, parameters bound and
// columns read in order (an empty optional is NULL both ways), and the head every variant row
// starts with.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

#include "db/records.hpp"

namespace swr::db {

// Prepared statements kept for the life of a connection: preparing the SQL costs several times
// more than running a lookup, and a tuner or a runtime asks the same few questions many times.
// A cached statement in use. It is reset when the lease ends, so that a statement stopped after
// its first row does not keep a read snapshot open (which would hide other writers' commits).
class StatementLease {
 public:
  explicit StatementLease(SQLite::Statement& statement) : statement_(statement) {}
  ~StatementLease();
  StatementLease(const StatementLease&) = delete;
  StatementLease& operator=(const StatementLease&) = delete;

  SQLite::Statement& statement() { return statement_; }

 private:
  SQLite::Statement& statement_;
};

class StatementCache {
 public:
  explicit StatementCache(SQLite::Database& database) : database_(database) {}

  // The statement for `sql`, prepared on first use, with no bindings. Not re-entrant for one SQL
  // text: finish with a lease before asking for the same statement again.
  StatementLease lease(const std::string& sql);

 private:
  SQLite::Database& database_;
  std::unordered_map<std::string, std::unique_ptr<SQLite::Statement>> statements_;
};

// Moving optional figures in and out of SQLite statements: an empty optional is NULL both ways.
// Binds parameters 1, 2, 3, ... in the order they are added.
class ParameterBinder {
 public:
  explicit ParameterBinder(SQLite::Statement& statement) : statement_(statement) {}

  ParameterBinder& add(std::int64_t value);
  ParameterBinder& add(int value) { return add(static_cast<std::int64_t>(value)); }
  ParameterBinder& add(bool value) { return add(static_cast<std::int64_t>(value ? 1 : 0)); }
  ParameterBinder& add(double value);
  ParameterBinder& add(const std::string& text);
  ParameterBinder& add(const char* text) { return add(std::string(text)); }
  ParameterBinder& add(const std::optional<double>& value);
  ParameterBinder& add(const std::optional<int>& value);
  // Empty text as NULL, for columns where NULL means "not given".
  ParameterBinder& add_text_or_null(const std::string& text);

 private:
  SQLite::Statement& statement_;
  int next_index_ = 1;
};

// Reads columns 0, 1, 2, ... in the order they are taken.
class ColumnReader {
 public:
  explicit ColumnReader(SQLite::Statement& statement, int first_column = 0)
      : statement_(statement), next_index_(first_column) {}

  std::int64_t int64();
  int integer();
  bool boolean() { return int64() != 0; }
  double real();
  std::string text();  // NULL reads as ""
  std::optional<double> optional_real();
  std::optional<int> optional_integer();

 private:
  SQLite::Statement& statement_;
  int next_index_ = 0;
};

// The columns every stored row about one variant starts with, a measurement's as a prediction's:
// its id, its config's key and JSON, and the (gpu, problem, config) it belongs to. Their queries
// select them first, as "x.id, c.key, c.json, x.gpu_id, x.problem_id, x.config_id".
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
