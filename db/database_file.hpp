// What lies at a database path before anything opens it for writing: nothing, an empty file, or
// an SQLite file of a schema this build understands. Anything else is refused untouched.
#pragma once

#include <SQLiteCpp/Database.h>

#include <filesystem>

namespace swr::db {

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
