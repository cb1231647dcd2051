#include "swr/gemm_config.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "generator/config_parsing.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

using config_parsing::key_fields_text;
using config_parsing::parse_key_fields;
using config_parsing::take_int;
using config_parsing::take_prefix;

constexpr std::string_view kSwizzlePrefix = "swz";

// "m128n256k32w2x4s4"
bool parse_tile_token(std::string_view token, GemmConfig& config) {
  return parse_key_fields(token, {{"m", &config.block_m},
                                  {"n", &config.block_n},
                                  {"k", &config.block_k},
                                  {"w", &config.warps_m},
                                  {"x", &config.warps_n},
                                  {"s", &config.stages}});
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
  std::string key = key_fields_text({{"m", block_m},
                                     {"n", block_n},
                                     {"k", block_k},
                                     {"w", warps_m},
                                     {"x", warps_n},
                                     {"s", stages}});
  key += '-';
  key += to_string(persistence);
  key += '-';
  key += swizzle_token(*this);
  return key;
}

std::optional<GemmConfig> GemmConfig::from_key(std::string_view key) {
  const std::vector<std::string_view> parts = config_parsing::split(key, '-');
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
  const config_parsing::ConfigJsonFields fields(json, "GEMM config JSON");
  GemmConfig config;
  config.block_m = fields.int_at_least("block_m", 1);
  config.block_n = fields.int_at_least("block_n", 1);
  config.block_k = fields.int_at_least("block_k", 1);
  config.warps_m = fields.int_at_least("warps_m", 1);
  config.warps_n = fields.int_at_least("warps_n", 1);
  config.stages = fields.int_at_least("stages", 1);
  config.persistence =
      fields.one_of("persistence", &parse_gemm_persistence, "\"grid\", \"static\"");
  config.swizzle_stride = fields.int_at_least("swizzle_stride", 0);
  config.swizzle_axis = fields.one_of("swizzle_axis", &parse_swizzle_axis, "\"m\", \"n\"");
  // Stride 0 is plain row-major whatever the axis: keep one spelling of it.
  if (config.swizzle_stride == 0) config.swizzle_axis = SwizzleAxis::n;
  return config;
}

}  // namespace swr
