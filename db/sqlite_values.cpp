#include "db/sqlite_values.hpp"

#include <SQLiteCpp/Column.h>

namespace swr::db {

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
