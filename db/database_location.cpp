#include "db/database_location.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <system_error>

#include "db/database_file.hpp"
#include "db/schema_migrations.hpp"
#include "swr/usage_error.hpp"

namespace swr::db {
namespace {

const char* non_empty_environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// Effective ids, as the process that opens the file will use them.
bool can_access(const std::filesystem::path& path, int mode) {
  return faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0;
}

std::filesystem::path directory_of(const std::filesystem::path& path) {
  const std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

void create_cache_directory(const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    throw UsageError("cannot create the results database directory " + directory.string() + ": " +
                     error.message() + " (pass --db or set SWR_DB)");
  }
}

}  // namespace

DatabaseLocation locate_database(const std::optional<std::string>& command_line_path) {
  if (command_line_path) {
    if (command_line_path->empty()) throw UsageError("--db needs a file path (got an empty one)");
    return {*command_line_path, DatabasePathSource::command_line};
  }
  if (const char* path = non_empty_environment("SWR_DB")) {
    return {path, DatabasePathSource::environment};
  }
  if (const char* cache = non_empty_environment("XDG_CACHE_HOME");
      cache != nullptr && std::filesystem::path(cache).is_absolute()) {
    return {std::filesystem::path(cache) / "swr" / "results.db", DatabasePathSource::user_cache};
  }
  if (const char* home = non_empty_environment("HOME")) {
    return {std::filesystem::path(home) / ".cache" / "swr" / "results.db",
            DatabasePathSource::user_cache};
  }
  throw UsageError(
      "no place for the results database: neither SWR_DB, XDG_CACHE_HOME nor HOME is set "
      "(pass --db PATH)");
}

void check_database_writable(const DatabaseLocation& location) {
  if (location.source == DatabasePathSource::user_cache) {
    const std::filesystem::path directory = directory_of(location.path);
    std::error_code error;
    if (!std::filesystem::exists(directory, error)) create_cache_directory(directory);
  }
  check_database_writable(location.path);
}

void check_database_name_lengths(const std::filesystem::path& path) {
  // SQLite opens "<path>-journal" and "<path>-wal" beside the file: their names must fit too.
  constexpr std::size_t kSidecarSuffix = sizeof("-journal") - 1;
  const std::size_t file_name_limit = NAME_MAX - kSidecarSuffix;
  const std::string file_name = path.filename().string();
  if (file_name.size() > file_name_limit) {
    throw UsageError("bad results database path " + path.string() + ": its file name is " +
                     std::to_string(file_name.size()) + " bytes; allowed at most " +
                     std::to_string(file_name_limit) + " (" + std::to_string(NAME_MAX) +
                     " less SQLite's \"-journal\" suffix)");
  }
  for (const std::filesystem::path& part : path.parent_path()) {
    if (part.string().size() > NAME_MAX) {
      throw UsageError("bad results database path " + path.string() + ": its directory name '" +
                       part.string() + "' is " + std::to_string(part.string().size()) +
                       " bytes; allowed at most " + std::to_string(NAME_MAX));
    }
  }
  const std::string absolute = std::filesystem::absolute(path).string();
  if (absolute.size() + kSidecarSuffix >= PATH_MAX) {
    throw UsageError("bad results database path " + path.string() + ": " +
                     std::to_string(absolute.size()) +
                     " bytes as an absolute path; allowed at most " +
                     std::to_string(PATH_MAX - 1 - kSidecarSuffix));
  }
}

void check_database_writable(const std::filesystem::path& path) {
  if (path.empty()) throw UsageError("the results database path is empty");
  check_database_name_lengths(path);
  const std::filesystem::path directory = directory_of(path);
  std::error_code error;
  const auto directory_status = std::filesystem::status(directory, error);
  if (!std::filesystem::exists(directory_status)) {
    throw UsageError("cannot create the results database " + path.string() + ": directory " +
                     directory.string() + " does not exist");
  }
  if (!std::filesystem::is_directory(directory_status)) {
    throw UsageError("cannot create the results database " + path.string() + ": " +
                     directory.string() + " is not a directory");
  }
  if (!can_access(directory, W_OK | X_OK)) {
    throw UsageError("cannot write the results database " + path.string() + ": directory " +
                     directory.string() + " is not writable");
  }
  const DatabaseFileState state = inspect_database_file(path);
  if (state != DatabaseFileState::missing && !can_access(path, R_OK | W_OK)) {
    throw UsageError("cannot write the results database " + path.string() +
                     ": the file is read-only");
  }
  check_existing_database(path, latest_schema_version());
}

}  // namespace swr::db
