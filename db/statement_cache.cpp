#include "db/statement_cache.hpp"

namespace swr::db {

// A statement whose last step failed reports that error again when reset: it was already
// thrown to the caller, so it is dropped here (and a destructor must not throw).
StatementLease::~StatementLease() {
  statement_.tryReset();
  try {
    statement_.clearBindings();  // sqlite3_clear_bindings cannot fail; this is belt and braces
  } catch (...) {
  }
}

StatementLease StatementCache::lease(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    it = statements_.emplace(sql, std::make_unique<SQLite::Statement>(database_, sql)).first;
  }
  return StatementLease(*it->second);
}

}  // namespace swr::db
