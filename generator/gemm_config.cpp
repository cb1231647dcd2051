#include "swr/gemm_config.hpp"

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "swr/usage_error.hpp"

namespace swr {
namespace {

constexpr std::string_view kSwizzlePrefix = "swz";

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

// Reads a decimal int >= minimum from the front of `text` and advances past it.
std::optional<int> take_int(std::string_view& text, int minimum) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || value < minimum) return std::nullopt;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}

bool take_prefix(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// "m128n256k32w2x4s4"
bool parse_tile_token(std::string_view token, GemmConfig& config) {
  const std::pair<std::string_view, int*> fields[] = {
      {"m", &config.block_m}, {"n", &config.block_n}, {"k", &config.block_k},
      {"w", &config.warps_m}, {"x", &config.warps_n}, {"s", &config.stages}};
  for (const auto& [prefix, target] : fields) {
    if (!take_prefix(token, prefix)) return false;
    const std::optional<int> value = take_int(token, 1);
    if (!value) return false;
    *target = *value;
  }
  return token.empty();
}

// "swz0", "swzn1792", "swzm512"
std::string swizzle_token(const GemmConfig& config) {
  std::string token(kSwizzlePrefix);
  if (config.swizzle_stride > 0) token += to_string(config.swizzle_axis);
  token += std::to_string(config.swizzle_stride);
  return token;
}

bool parse_swizzle_token(std::string_view token, GemmConfig& config) {
  if (!take_prefix(token, kSwizzlePrefix)) return false;
  if (token == "0") {
    config.swizzle_stride = 0;
    config.swizzle_axis = SwizzleAxis::n;
    return true;
  }
  const std::optional<SwizzleAxis> axis = parse_swizzle_axis(token.substr(0, 1));
  if (!axis) return false;
  token.remove_prefix(1);
  const std::optional<int> stride = take_int(token, 1);
  if (!stride || !token.empty()) return false;
  config.swizzle_axis = *axis;
  config.swizzle_stride = *stride;
  return true;
}

const nlohmann::json& require_field(const nlohmann::json& json, const char* name) {
  const auto it = json.find(name);
  if (it == json.end()) {
    throw UsageError(std::string("GEMM config JSON: field \"") + name + "\" is missing");
  }
  return *it;
}

int read_int(const nlohmann::json& json, const char* name, int minimum) {
  const nlohmann::json& value = require_field(json, name);
  if (!value.is_number_integer() || value.get<long long>() < minimum ||
      value.get<long long>() > std::numeric_limits<int>::max()) {
    throw UsageError(std::string("GEMM config JSON: field \"") + name +
                     "\" must be an integer of at least " + std::to_string(minimum) + " (got " +
                     value.dump() + ")");
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
    throw UsageError(std::string("GEMM config JSON: field \"") + name + "\" must be one of " +
                     allowed + " (got " + value.dump() + ")");
  }
  return *parsed;
}

}  // namespace

std::string_view to_string(GemmPersistence persistence) {
  return persistence == GemmPersistence::static_loop ? "static" : "grid";
}

std::string_view to_string(SwizzleAxis axis) {
  return axis == SwizzleAxis::m ? "m" : "n";
}

std::optional<GemmPersistence> parse_gemm_persistence(std::string_view text) {
  if (text == "grid") return GemmPersistence::grid;
  if (text == "static") return GemmPersistence::static_loop;
  return std::nullopt;
}

std::optional<SwizzleAxis> parse_swizzle_axis(std::string_view text) {
  if (text == "n") return SwizzleAxis::n;
  if (text == "m") return SwizzleAxis::m;
  return std::nullopt;
}

std::string GemmConfig::key() const {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  const std::pair<const char*, int> fields[] = {{"m", block_m}, {"n", block_n}, {"k", block_k},
                                                {"w", warps_m}, {"x", warps_n}, {"s", stages}};
  std::string key;
  for (const auto& [prefix, value] : fields) {
    key += prefix;
    key += std::to_string(value);
  }
  key += '-';
  key += to_string(persistence);
  key += '-';
  key += swizzle_token(*this);
  return key;
}

std::optional<GemmConfig> GemmConfig::from_key(std::string_view key) {
  const std::vector<std::string_view> parts = split(key, '-');
  if (parts.size() != 3) return std::nullopt;
  GemmConfig config;
  if (!parse_tile_token(parts[0], config)) return std::nullopt;
  const std::optional<GemmPersistence> persistence = parse_gemm_persistence(parts[1]);
  if (!persistence) return std::nullopt;
  config.persistence = *persistence;
  if (!parse_swizzle_token(parts[2], config)) return std::nullopt;
  // Only the canonical spelling is a key: the same kernel must never have two.
  if (config.key() != key) return std::nullopt;
  return config;
}

nlohmann::json GemmConfig::to_json() const {
  return {{"block_m", block_m},
          {"block_n", block_n},
          {"block_k", block_k},
          {"warps_m", warps_m},
          {"warps_n", warps_n},
          {"stages", stages},
          {"persistence", std::string(to_string(persistence))},
          {"swizzle_stride", swizzle_stride},
          {"swizzle_axis", std::string(to_string(swizzle_axis))}};
}

GemmConfig GemmConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw UsageError("GEMM config JSON must be an object");
  GemmConfig config;
  config.block_m = read_int(json, "block_m", 1);
  config.block_n = read_int(json, "block_n", 1);
  config.block_k = read_int(json, "block_k", 1);
  config.warps_m = read_int(json, "warps_m", 1);
  config.warps_n = read_int(json, "warps_n", 1);
  config.stages = read_int(json, "stages", 1);
  config.persistence =
      read_enum(json, "persistence", &parse_gemm_persistence, "\"grid\", \"static\"");
  config.swizzle_stride = read_int(json, "swizzle_stride", 0);
  config.swizzle_axis = read_enum(json, "swizzle_axis", &parse_swizzle_axis, "\"m\", \"n\"");
  // Stride 0 is plain row-major whatever the axis: keep one spelling of it.
  if (config.swizzle_stride == 0) config.swizzle_axis = SwizzleAxis::n;
  return config;
}

}  // namespace swr
