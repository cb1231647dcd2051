#include "db/database_errors.hpp"

#include <string>

namespace swr::db {

UsageError not_sqlite(const std::filesystem::path& path) {
  return UsageError(path.string() + " is not an swr results database (not SQLite)");
}

UsageError damaged_sqlite(const std::filesystem::path& path, const std::string& detail) {
  return UsageError(path.string() +
                    " is not an swr results database (a damaged SQLite file: " + detail + ")");
}

UsageError not_a_results_database(const std::filesystem::path& path) {
  return UsageError(path.string() +
                    " is not an swr results database (an SQLite file with other tables and no "
                    "schema_version): choose another --db path");
}

UsageError schema_too_new(const std::filesystem::path& path, int version, int latest) {
  return UsageError(path.string() + " has results schema version " + std::to_string(version) +
                    ", newer than this build of swr reads (up to " + std::to_string(latest) +
                    "): use a newer swr-tune or another --db path");
}

UsageError schema_too_old_to_read(const std::filesystem::path& path, int version, int latest) {
  return UsageError(path.string() + " has results schema version " + std::to_string(version) +
                    " and this build reads version " + std::to_string(latest) +
                    ": open it once for writing (e.g. run a tune) to upgrade it");
}

UsageError no_database(const std::filesystem::path& path) {
  return UsageError("no results database at " + path.string() +
                    " (nothing tuned there yet; pass --db or set SWR_DB)");
}

}  // namespace swr::db
