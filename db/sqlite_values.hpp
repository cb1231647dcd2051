// Moving optional figures in and out of SQLite statements: an empty optional is NULL both ways.
#pragma once

#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <optional>
#include <string>

namespace swr::db {

// Binds parameters 1, 2, 3, ... in the order they are added.
class ParameterBinder {
 public:
  explicit ParameterBinder(SQLite::Statement& statement) : statement_(statement) {}

  ParameterBinder& add(std::int64_t value);
  ParameterBinder& add(int value) { return add(static_cast<std::int64_t>(value)); }
  ParameterBinder& add(bool value) { return add(static_cast<std::int64_t>(value ? 1 : 0)); }
  ParameterBinder& add(double value);
  ParameterBinder& add(const std::string& text);
  ParameterBinder& add(const char* text) { return add(std::string(text)); }
  ParameterBinder& add(const std::optional<double>& value);
  ParameterBinder& add(const std::optional<int>& value);
  // Empty text as NULL, for columns where NULL means "not given".
  ParameterBinder& add_text_or_null(const std::string& text);

 private:
  SQLite::Statement& statement_;
  int next_index_ = 1;
};

// Reads columns 0, 1, 2, ... in the order they are taken.
class ColumnReader {
 public:
  explicit ColumnReader(SQLite::Statement& statement) : statement_(statement) {}

  std::int64_t int64();
  int integer();
  bool boolean() { return int64() != 0; }
  double real();
  std::string text();  // NULL reads as ""
  std::optional<double> optional_real();
  std::optional<int> optional_integer();

 private:
  SQLite::Statement& statement_;
  int next_index_ = 0;
};

}  // namespace swr::db
