// Reading and writing the two text forms of a variant config, for every family
// (attention_config.cpp, gemm_config.cpp): the key, whose tokens are runs of prefixed numbers
// ("m128n64w8s2") joined by '-', and the JSON object, whose bad fields are one-line UsageErrors
// that name the field.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "swr/attention_config.hpp"
#include "swr/usage_error.hpp"

namespace swr::config_parsing {

std::vector<std::string_view> split(std::string_view text, char separator);
// Removes `prefix` from the front of `text`; false (text untouched) when it is not there.
bool take_prefix(std::string_view& text, std::string_view prefix);
// Reads a decimal int >= minimum from the front of `text` and advances past it.
std::optional<int> take_int(std::string_view& text, int minimum);

// One prefixed number of a key token, e.g. {"m", &config.block_m}.
struct KeyField {
  std::string_view prefix;
  int* value;
};
// "m128n64w8s2" from {{"m", block_m}, {"n", block_n}, {"w", warps}, {"s", stages}}.
std::string key_fields_text(std::initializer_list<std::pair<std::string_view, int>> fields);
// The reverse: every prefix in order, each followed by a positive number, and nothing after.
bool parse_key_fields(std::string_view token, std::initializer_list<KeyField> fields);

// The swizzle token of an attention key (both passes): the swizzle's name, or "groups<N>" for
// head_groups of N; and the reverse (false for anything else, the outputs untouched).
std::string swizzle_key_token(TileSwizzle swizzle, int head_group);
bool parse_swizzle_token(std::string_view token, TileSwizzle& swizzle, int& head_group);

// The fields of a config's JSON object; every message starts with `what` ("config JSON").
class ConfigJsonFields {
 public:
  ConfigJsonFields(const nlohmann::json& json, std::string what)
      : json_(json), what_(std::move(what)) {}

  const nlohmann::json& require(const char* name) const;
  // "... must be a positive integer (got ...)"
  int positive_int(const char* name) const;
  // "... must be an integer of at least <minimum> (got ...)", the GEMM family's wording.
  int int_at_least(const char* name, int minimum) const;
  // "... must be true or false (got ...)"
  bool boolean(const char* name) const;
  // One of the names `parse` accepts, else "... must be one of <allowed> (got ...)".
  template <class Enum>
  Enum one_of(const char* name, std::optional<Enum> (*parse)(std::string_view),
              const char* allowed) const {
    const nlohmann::json& value = require(name);
    std::optional<Enum> parsed;
    if (value.is_string()) parsed = parse(value.get<std::string>());
    if (!parsed) fail(name, std::string("must be one of ") + allowed, value);
    return *parsed;
  }

 private:
  [[noreturn]] void fail(const char* name, const std::string& rule,
                         const nlohmann::json& value) const;

  const nlohmann::json& json_;
  std::string what_;
};

}  // namespace swr::config_parsing
