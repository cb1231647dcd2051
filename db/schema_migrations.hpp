// The results database's schema history, oldest first. A released migration is never edited:
// a schema change is a new migration appended to the list.
#pragma once

#include <span>

#include "db/migration_runner.hpp"

namespace swr::db {

std::span<const Migration> schema_migrations();

// The version this build writes and reads: the last migration's.
int latest_schema_version();

}  // namespace swr::db
