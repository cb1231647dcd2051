// Prepared statements kept for the life of a connection: preparing the SQL costs several times
// more than running a lookup, and a tuner or a runtime asks the same few questions many times.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <memory>
#include <string>
#include <unordered_map>

namespace swr::db {

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

}  // namespace swr::db
