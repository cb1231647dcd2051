#include "db/migration_runner.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <stdexcept>

#include "db/database_errors.hpp"

namespace swr::db {
namespace {

void require_consecutive_versions(std::span<const Migration> migrations) {
  for (std::size_t index = 0; index < migrations.size(); ++index) {
    const int expected = static_cast<int>(index) + 1;
    if (migrations[index].version != expected) {
      throw std::logic_error("schema migration number " + std::to_string(expected) +
                             " is numbered " + std::to_string(migrations[index].version));
    }
  }
}

// The version table belongs to the mechanism, not to any migration.
constexpr const char* kCreateVersionTable =
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY,"
    " description TEXT NOT NULL,"
    " applied_at TEXT NOT NULL)";

}  // namespace

int read_schema_version(SQLite::Database& database) {
  if (!database.tableExists("schema_version")) return 0;
  return database.execAndGet("SELECT COALESCE(MAX(version), 0) FROM schema_version").getInt();
}

void apply_migrations(SQLite::Database& database, std::span<const Migration> migrations) {
  require_consecutive_versions(migrations);
  const int latest = static_cast<int>(migrations.size());
  for (const Migration& migration : migrations) {
    if (read_schema_version(database) >= migration.version) continue;  // cheap check, no lock
    SQLite::Transaction transaction(database, SQLite::TransactionBehavior::IMMEDIATE);
    // Another process may have migrated while this one waited for the write lock.
    const int current = read_schema_version(database);
    if (current > latest) throw schema_too_new(database.getFilename(), current, latest);
    if (current >= migration.version) continue;
    database.exec(kCreateVersionTable);
    for (const std::string& statement : migration.statements) database.exec(statement);
    SQLite::Statement record(database,
                             "INSERT INTO schema_version (version, description, applied_at) "
                             "VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
    record.bind(1, migration.version);
    record.bind(2, migration.description);
    record.exec();
    transaction.commit();
  }
  const int current = read_schema_version(database);
  if (current > latest) throw schema_too_new(database.getFilename(), current, latest);
}

}  // namespace swr::db
