#include "db/sqlite_access.hpp"

#include <SQLiteCpp/Column.h>

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

ParameterBinder& ParameterBinder::add(std::int64_t value) {
  statement_.bind(next_index_++, value);
  return *this;
}

ParameterBinder& ParameterBinder::add(double value) {
  statement_.bind(next_index_++, value);
  return *this;
}

ParameterBinder& ParameterBinder::add(const std::string& text) {
  statement_.bind(next_index_++, text);
  return *this;
}

ParameterBinder& ParameterBinder::add(const std::optional<double>& value) {
  if (value) return add(*value);
  statement_.bind(next_index_++);
  return *this;
}

ParameterBinder& ParameterBinder::add(const std::optional<int>& value) {
  if (value) return add(static_cast<std::int64_t>(*value));
  statement_.bind(next_index_++);
  return *this;
}

ParameterBinder& ParameterBinder::add_text_or_null(const std::string& text) {
  if (!text.empty()) return add(text);
  statement_.bind(next_index_++);
  return *this;
}

std::int64_t ColumnReader::int64() {
  return statement_.getColumn(next_index_++).getInt64();
}

int ColumnReader::integer() {
  return statement_.getColumn(next_index_++).getInt();
}

double ColumnReader::real() {
  return statement_.getColumn(next_index_++).getDouble();
}

std::string ColumnReader::text() {
  const SQLite::Column column = statement_.getColumn(next_index_++);
  return column.isNull() ? std::string() : column.getString();
}

std::optional<double> ColumnReader::optional_real() {
  const SQLite::Column column = statement_.getColumn(next_index_++);
  if (column.isNull()) return std::nullopt;
  return column.getDouble();
}

std::optional<int> ColumnReader::optional_integer() {
  const SQLite::Column column = statement_.getColumn(next_index_++);
  if (column.isNull()) return std::nullopt;
  return column.getInt();
}

}  // namespace swr::db
