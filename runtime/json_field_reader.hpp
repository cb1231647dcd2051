// Strict reading of a JSON document written by swr (an export manifest): every fault is one
// UsageError naming the document and the field path, e.g.
//   "export/manifest.json: kernels[2].cubin.sha256 must be 64 hex digits (got \"12ab\")".
// Every field must be present; optional figures are present as null.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace swr {

class JsonFieldReader {
 public:
  // `path` is the field path of `value` in the document ("" for the root). Throws when `value`
  // is not an object.
  JsonFieldReader(const nlohmann::json& value, std::string document, std::string path = "");

  JsonFieldReader object(const char* name) const;
  // The array's length; read its elements with element().
  std::size_t array_size(const char* name) const;
  JsonFieldReader element(const char* array_name, std::size_t index) const;
  const nlohmann::json& value(const char* name) const;  // any type
  // Whether the field is present at all: for the few fields written only where they mean
  // something (then read strictly like the others).
  bool has(const char* name) const;

  std::string text(const char* name) const;  // a non-empty string
  std::int64_t integer(const char* name, std::int64_t minimum, std::int64_t maximum) const;
  int positive_int(const char* name) const;
  bool boolean(const char* name) const;
  double positive_number(const char* name) const;
  std::optional<double> optional_number(const char* name) const;  // a number or null
  std::optional<int> optional_int(const char* name) const;        // a non-negative int or null

  // Fails at the first place where the field differs from `expected` (a missing or extra member,
  // another type, array length or value), naming its path and `why` it must be so: for fields a
  // document writes out from others it holds.
  void require_json(const char* name, const nlohmann::json& expected, const std::string& why) const;

  // Throws the UsageError for `name` of this object.
  [[noreturn]] void fail(const char* name, const std::string& problem) const;
  std::string field_path(const char* name) const;

 private:
  const nlohmann::json& value_;
  std::string document_;
  std::string path_;
};

}  // namespace swr
