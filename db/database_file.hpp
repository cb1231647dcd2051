// What lies at a database path before anything opens it for writing: nothing, an empty file, or
// an SQLite file of a schema this build understands. Anything else is refused untouched, with one
// of the one-line errors below.
#pragma once

#include <SQLiteCpp/Database.h>

#include <filesystem>
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

// inspect_database_file, then, for an SQLite file, require_known_schema through a read-only
// connection. Returns the schema version (0 when missing or empty).
int check_existing_database(const std::filesystem::path& path, int latest);

}  // namespace swr::db
