// The results database's schema: the migration mechanism (an ordered list of migrations, each a
// set of SQL statements applied in one transaction together with its row in the `schema_version`
// table, so a database is always at exactly one version, even when a process dies
// mid-migration), and the schema's history, oldest first. A released migration is never edited:
// a schema change is a new migration appended to the list.
#pragma once

#include <SQLiteCpp/Database.h>

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace swr::db {

struct Migration {
  int version = 0;  // 1, 2, 3, ... in order
  std::string description;
  std::vector<std::string> statements;
  // After the statements, in the same transaction: a change SQL alone cannot say (one that reads
  // the schema first). Empty for most.
  std::function<void(SQLite::Database&)> apply;
};

// The highest version applied; 0 for a database without a schema_version table.
int read_schema_version(SQLite::Database& database);

// Applies, in order, every migration newer than the database. Each runs in an IMMEDIATE
// transaction that re-reads the version first, so two processes opening one new file migrate it
// once. Throws std::logic_error for a list not numbered 1, 2, 3, ..., UsageError for a database
// newer than the list, and SQLite::Exception (after rolling the migration back) for failing SQL.
void apply_migrations(SQLite::Database& database, std::span<const Migration> migrations);

std::span<const Migration> schema_migrations();

// The version this build writes: the last migration's.
int latest_schema_version();

// The oldest version this build reads without migrating (read-only opens): the later migrations
// change nothing this build reads.
int oldest_readable_schema_version();

}  // namespace swr::db
