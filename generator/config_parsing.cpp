#include "generator/config_parsing.hpp"

#include <charconv>
#include <limits>

namespace swr::config_parsing {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

bool take_prefix(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

std::optional<int> take_int(std::string_view& text, int minimum) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || value < minimum) return std::nullopt;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}

std::string key_fields_text(std::initializer_list<std::pair<std::string_view, int>> fields) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string text;
  for (const auto& [prefix, value] : fields) {
    text += prefix;
    text += std::to_string(value);
  }
  return text;
}

bool parse_key_fields(std::string_view token, std::initializer_list<KeyField> fields) {
  for (const KeyField& field : fields) {
    if (!take_prefix(token, field.prefix)) return false;
    const std::optional<int> value = take_int(token, 1);
    if (!value) return false;
    *field.value = *value;
  }
  return token.empty();
}

const nlohmann::json& ConfigJsonFields::require(const char* name) const {
  const auto it = json_.find(name);
  if (it == json_.end()) {
    throw UsageError(what_ + ": field \"" + name + "\" is missing");
  }
  return *it;
}

int ConfigJsonFields::positive_int(const char* name) const {
  const nlohmann::json& value = require(name);
  if (!value.is_number_integer() || value.get<long long>() < 1 ||
      value.get<long long>() > std::numeric_limits<int>::max()) {
    fail(name, "must be a positive integer", value);
  }
  return value.get<int>();
}

int ConfigJsonFields::int_at_least(const char* name, int minimum) const {
  const nlohmann::json& value = require(name);
  if (!value.is_number_integer() || value.get<long long>() < minimum ||
      value.get<long long>() > std::numeric_limits<int>::max()) {
    fail(name, "must be an integer of at least " + std::to_string(minimum), value);
  }
  return value.get<int>();
}

bool ConfigJsonFields::boolean(const char* name) const {
  const nlohmann::json& value = require(name);
  if (!value.is_boolean()) fail(name, "must be true or false", value);
  return value.get<bool>();
}

void ConfigJsonFields::fail(const char* name, const std::string& rule,
                            const nlohmann::json& value) const {
  throw UsageError(what_ + ": field \"" + name + "\" " + rule + " (got " + value.dump() + ")");
}

namespace {
constexpr std::string_view kHeadGroupsKeyPrefix = "groups";
}  // namespace

std::string swizzle_key_token(TileSwizzle swizzle, int head_group) {
  if (swizzle == TileSwizzle::head_groups) {
    return std::string(kHeadGroupsKeyPrefix) + std::to_string(head_group);
  }
  return std::string(to_string(swizzle));
}

bool parse_swizzle_token(std::string_view token, TileSwizzle& swizzle, int& head_group) {
  if (take_prefix(token, kHeadGroupsKeyPrefix)) {
    const std::optional<int> group = take_int(token, 1);
    if (!group || !token.empty()) return false;
    swizzle = TileSwizzle::head_groups;
    head_group = *group;
    return true;
  }
  const std::optional<TileSwizzle> parsed = parse_tile_swizzle(token);
  if (!parsed || *parsed == TileSwizzle::head_groups) return false;
  swizzle = *parsed;
  return true;
}

}  // namespace swr::config_parsing
