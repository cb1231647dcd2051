#include "swr/attention_config.hpp"

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "swr/usage_error.hpp"

namespace swr {
namespace {

constexpr std::string_view kHeadGroupsKeyPrefix = "groups";
constexpr std::string_view kFaultKeySuffix = "fault";

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

// Reads a positive decimal int from the front of `text` and advances past it.
std::optional<int> take_positive_int(std::string_view& text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || value < 1) return std::nullopt;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}

bool take_prefix(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// "m128n64w8s2" -> block_m, block_n, warps, stages.
bool parse_tile_token(std::string_view token, AttentionConfig& config) {
  const std::pair<std::string_view, int*> fields[] = {
      {"m", &config.block_m}, {"n", &config.block_n}, {"w", &config.warps}, {"s", &config.stages}};
  for (const auto& [prefix, target] : fields) {
    if (!take_prefix(token, prefix)) return false;
    const std::optional<int> value = take_positive_int(token);
    if (!value) return false;
    *target = *value;
  }
  return token.empty();
}

std::string swizzle_key_token(const AttentionConfig& config) {
  if (config.swizzle == TileSwizzle::head_groups) {
    return std::string(kHeadGroupsKeyPrefix) + std::to_string(config.head_group);
  }
  return std::string(to_string(config.swizzle));
}

bool parse_swizzle_token(std::string_view token, AttentionConfig& config) {
  if (take_prefix(token, kHeadGroupsKeyPrefix)) {
    const std::optional<int> group = take_positive_int(token);
    if (!group || !token.empty()) return false;
    config.swizzle = TileSwizzle::head_groups;
    config.head_group = *group;
    return true;
  }
  const std::optional<TileSwizzle> swizzle = parse_tile_swizzle(token);
  if (!swizzle || *swizzle == TileSwizzle::head_groups) return false;
  config.swizzle = *swizzle;
  return true;
}

// JSON field readers: every failure is a one-line UsageError naming the field.
const nlohmann::json& require_field(const nlohmann::json& json, const char* name) {
  const auto it = json.find(name);
  if (it == json.end()) {
    throw UsageError(std::string("config JSON: field \"") + name + "\" is missing");
  }
  return *it;
}

int read_positive_int(const nlohmann::json& json, const char* name) {
  const nlohmann::json& value = require_field(json, name);
  if (!value.is_number_integer() || value.get<long long>() < 1 ||
      value.get<long long>() > std::numeric_limits<int>::max()) {
    throw UsageError(std::string("config JSON: field \"") + name +
                     "\" must be a positive integer (got " + value.dump() + ")");
  }
  return value.get<int>();
}

template <class Enum>
Enum read_enum(const nlohmann::json& json, const char* name,
               std::optional<Enum> (*parse)(std::string_view), const char* allowed) {
  const nlohmann::json& value = require_field(json, name);
  std::optional<Enum> parsed;
  if (value.is_string()) parsed = parse(value.get<std::string>());
  if (!parsed) {
    throw UsageError(std::string("config JSON: field \"") + name + "\" must be one of " + allowed +
                     " (got " + value.dump() + ")");
  }
  return *parsed;
}

}  // namespace

std::string_view to_string(KvOrder order) {
  switch (order) {
    case KvOrder::cyclic:
      return "cyclic";
    case KvOrder::sawtooth:
      return "sawtooth";
  }
  return "unknown";
}

std::string_view to_string(Persistence persistence) {
  switch (persistence) {
    case Persistence::grid:
      return "grid";
    case Persistence::static_loop:
      return "static";
    case Persistence::dynamic:
      return "dynamic";
  }
  return "unknown";
}

std::string_view to_string(TileSwizzle swizzle) {
  switch (swizzle) {
    case TileSwizzle::head_major:
      return "head_major";
    case TileSwizzle::heads_interleaved:
      return "heads_interleaved";
    case TileSwizzle::head_groups:
      return "head_groups";
  }
  return "unknown";
}

std::optional<KvOrder> parse_kv_order(std::string_view text) {
  if (text == "cyclic") return KvOrder::cyclic;
  if (text == "sawtooth") return KvOrder::sawtooth;
  return std::nullopt;
}

std::optional<Persistence> parse_persistence(std::string_view text) {
  if (text == "grid") return Persistence::grid;
  // "static_loop" is the enumerator's name; "static" is the text form.
  if (text == "static" || text == "static_loop") return Persistence::static_loop;
  if (text == "dynamic") return Persistence::dynamic;
  return std::nullopt;
}

std::optional<TileSwizzle> parse_tile_swizzle(std::string_view text) {
  if (text == "head_major") return TileSwizzle::head_major;
  if (text == "heads_interleaved") return TileSwizzle::heads_interleaved;
  if (text == "head_groups") return TileSwizzle::head_groups;
  return std::nullopt;
}

std::string AttentionConfig::key() const {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string key = "m";
  key += std::to_string(block_m);
  key += 'n';
  key += std::to_string(block_n);
  key += 'w';
  key += std::to_string(warps);
  key += 's';
  key += std::to_string(stages);
  key += '-';
  key += to_string(order);
  key += '-';
  key += to_string(persistence);
  key += '-';
  key += swizzle_key_token(*this);
  if (planted_fault) {
    key += '-';
    key += kFaultKeySuffix;
  }
  return key;
}

std::optional<AttentionConfig> AttentionConfig::from_key(std::string_view key) {
  const std::vector<std::string_view> parts = split(key, '-');
  if (parts.size() != 4 && parts.size() != 5) return std::nullopt;
  AttentionConfig config;
  if (!parse_tile_token(parts[0], config)) return std::nullopt;
  const std::optional<KvOrder> order = parse_kv_order(parts[1]);
  const std::optional<Persistence> persistence = parse_persistence(parts[2]);
  if (!order || !persistence) return std::nullopt;
  config.order = *order;
  config.persistence = *persistence;
  if (!parse_swizzle_token(parts[3], config)) return std::nullopt;
  if (parts.size() == 5) {
    if (parts[4] != kFaultKeySuffix) return std::nullopt;
    config.planted_fault = true;
  }
  // Only the canonical spelling is a key: "m0128...", "static_loop" and the like are not.
  if (config.key() != key) return std::nullopt;
  return config;
}

nlohmann::json AttentionConfig::to_json() const {
  nlohmann::json json = {{"block_m", block_m},
                         {"block_n", block_n},
                         {"warps", warps},
                         {"stages", stages},
                         {"order", to_string(order)},
                         {"persistence", to_string(persistence)},
                         {"swizzle", to_string(swizzle)},
                         {"head_group", swizzle == TileSwizzle::head_groups ? head_group : 1},
                         {"planted_fault", planted_fault},
                         {"key", key()}};
  return json;
}

AttentionConfig AttentionConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) {
    throw UsageError("config JSON must be an object (got " + json.dump() + ")");
  }
  AttentionConfig config;
  config.block_m = read_positive_int(json, "block_m");
  config.block_n = read_positive_int(json, "block_n");
  config.warps = read_positive_int(json, "warps");
  config.stages = read_positive_int(json, "stages");
  config.order = read_enum<KvOrder>(json, "order", parse_kv_order, "cyclic, sawtooth");
  config.persistence =
      read_enum<Persistence>(json, "persistence", parse_persistence, "grid, static, dynamic");
  config.swizzle = read_enum<TileSwizzle>(json, "swizzle", parse_tile_swizzle,
                                          "head_major, heads_interleaved, head_groups");
  // head_group only means something for head_groups; the other swizzles always carry 1.
  if (config.swizzle == TileSwizzle::head_groups) {
    config.head_group = read_positive_int(json, "head_group");
  }
  if (const auto it = json.find("planted_fault"); it != json.end()) {
    if (!it->is_boolean()) {
      throw UsageError("config JSON: field \"planted_fault\" must be true or false (got " +
                       it->dump() + ")");
    }
    config.planted_fault = it->get<bool>();
  }
  if (const auto it = json.find("key"); it != json.end()) {
    if (!it->is_string() || it->get<std::string>() != config.key()) {
      throw UsageError("config JSON: field \"key\" " + it->dump() +
                       " does not match the other fields (" + config.key() + ")");
    }
  }
  return config;
}

}  // namespace swr
