// What lies at a database path before anything opens it for writing: nothing, an empty file, or
// an SQLite file of a schema this build understands. Anything else is refused untouched, with one
// of the one-line errors below.
#pragma once

#include <SQLiteCpp/Database.h>

#include <filesystem>
#include <memory>
#include <string>

#include "swr/usage_error.hpp"

namespace swr::db {

// The one-line errors for a --db path that cannot be used. They are UsageErrors: the user named
// the wrong file or directory, the command exits with code 2 and nothing is written.
UsageError not_sqlite(const std::filesystem::path& path);
UsageError damaged_sqlite(const std::filesystem::path& path, const std::string& detail);
UsageError not_a_results_database(const std::filesystem::path& path);
UsageError schema_too_new(const std::filesystem::path& path, int version, int latest);
UsageError schema_too_old_to_read(const std::filesystem::path& path, int version, int oldest,
                                  int latest);
UsageError no_database(const std::filesystem::path& path);

enum class DatabaseFileState {
  missing,  // will be created
  empty,    // zero bytes: SQLite treats it as a new database
  sqlite,   // starts with the SQLite header
};

// Reads at most the 16-byte header. Throws UsageError for a directory, an unreadable file, or a
// file that is not SQLite ("<path> is not an swr results database (not SQLite)").
DatabaseFileState inspect_database_file(const std::filesystem::path& path);

// The schema version of an open database (0 for one with no tables at all). Throws UsageError
// when it is an SQLite file of something else (tables, no schema_version), newer than `latest`,
// or damaged. Reads only.
int require_known_schema(SQLite::Database& database, const std::filesystem::path& path, int latest);

// inspect_database_file, then, for an SQLite file, require_known_schema and SQLite's structural
// check (PRAGMA quick_check) through a read-only connection: a damaged file is refused with its
// path and the check's first message, before anything writes to it. A rollback journal left by a
// killed writer is rolled back first (SQLite's own recovery; a read-only connection cannot).
// Returns the schema version (0 when missing or empty).
int check_existing_database(const std::filesystem::path& path, int latest);

// "<path>-journal is a rollback journal left by ...": what it is and how to recover.
UsageError stale_journal(const std::filesystem::path& path);

// Opens an existing SQLite file for reading without writing anything in its directory, so that
// read-only directories, files and images work and no -wal/-shm is left behind: SQLite's
// immutable form when no -wal file is beside it (every commit is in the file itself and no
// connection has it open in WAL mode), read-only with the usual locks when there is one (a writer
// may be at work). Refuses a file with a rollback journal beside it (stale_journal): read without
// it, a half-written transaction would be taken for data.
std::unique_ptr<SQLite::Database> open_database_for_reading(const std::filesystem::path& path,
                                                            int busy_timeout_ms);

}  // namespace swr::db
