// Where the results database lives, and the check that it can be written there, made before any
// GPU work so that a bad --db path costs nothing.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace swr::db {

enum class DatabasePathSource {
  command_line,  // --db
  environment,   // $SWR_DB
  user_cache,    // $XDG_CACHE_HOME/swr/results.db or $HOME/.cache/swr/results.db
};

struct DatabaseLocation {
  std::filesystem::path path;
  DatabasePathSource source = DatabasePathSource::user_cache;
};

// What locate_database() picks when no --db is given, as --help says it.
inline constexpr const char* kDatabaseDefaultHelp =
    "default: $SWR_DB, else $XDG_CACHE_HOME/swr/results.db, else ~/.cache/swr/results.db";

// --db if given, else $SWR_DB, else $XDG_CACHE_HOME/swr/results.db (an absolute XDG_CACHE_HOME
// only, as the XDG spec says), else $HOME/.cache/swr/results.db. Throws UsageError for an empty
// --db and when none of them gives a path.
DatabaseLocation locate_database(const std::optional<std::string>& command_line_path = {});

// Throws UsageError, naming the directory or the file, unless a database at `path` can be
// created or written and is one this build understands: the directory exists and is writable
// (SQLite writes its -wal and -shm files beside the database), an existing file is a writable
// SQLite file of a known schema version (read through a read-only connection: nothing is changed
// and no file is created). The user's cache directory is the one directory created when missing,
// since it is ours to make; a directory named by --db or SWR_DB must exist.
void check_database_writable(const DatabaseLocation& location);
void check_database_writable(const std::filesystem::path& path);
// UsageError when a name in `path` is longer than the file system takes (checked before any work,
// rather than found when the results are stored): the file name must leave room for SQLite's
// "-journal" and "-wal" beside it.
void check_database_name_lengths(const std::filesystem::path& path);

}  // namespace swr::db
