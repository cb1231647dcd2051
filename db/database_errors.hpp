// The one-line errors for a --db path that cannot be used. They are UsageErrors: the user named
// the wrong file or directory, the command exits with code 2 and nothing is written.
#pragma once

#include <filesystem>
#include <string>

#include "swr/usage_error.hpp"

namespace swr::db {

UsageError not_sqlite(const std::filesystem::path& path);
UsageError damaged_sqlite(const std::filesystem::path& path, const std::string& detail);
UsageError not_a_results_database(const std::filesystem::path& path);
UsageError schema_too_new(const std::filesystem::path& path, int version, int latest);
UsageError schema_too_old_to_read(const std::filesystem::path& path, int version, int latest);
UsageError no_database(const std::filesystem::path& path);

}  // namespace swr::db
