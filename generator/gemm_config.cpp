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
constexpr std::string_view kWgmmaPrefix = "wgmma";
constexpr std::string_view kTransposedToken = "transposed";

bool is_wgmma(const GemmConfig& config) {
  return config.path == InstructionPath::wgmma;
}

// "m128n256k32w2x4s4"
bool parse_tile_token(std::string_view token, GemmConfig& config) {
  return parse_key_fields(token, {{"m", &config.block_m},
                                  {"n", &config.block_n},
                                  {"k", &config.block_k},
                                  {"w", &config.warps_m},
                                  {"x", &config.warps_n},
                                  {"s", &config.stages}});
}

// "m128n256k64s3" (wgmma: no warps, the warpgroups are fixed)
bool parse_wgmma_tile_token(std::string_view token, GemmConfig& config) {
  return parse_key_fields(token, {{"m", &config.block_m},
                                  {"n", &config.block_n},
                                  {"k", &config.block_k},
                                  {"s", &config.stages}});
}

// Each path's persistences: mma_sync has no dynamic or stream-K mode, the persistent wgmma kernel
// no grid.
std::optional<GemmPersistence> parse_mma_sync_persistence(std::string_view text) {
  const std::optional<GemmPersistence> persistence = parse_gemm_persistence(text);
  if (persistence == GemmPersistence::dynamic_loop || persistence == GemmPersistence::stream_k)
    return std::nullopt;
  return persistence;
}

std::optional<GemmPersistence> parse_wgmma_persistence(std::string_view text) {
  const std::optional<GemmPersistence> persistence = parse_gemm_persistence(text);
  if (persistence == GemmPersistence::grid) return std::nullopt;
  return persistence;
}

// "c2x1"
bool parse_cluster_token(std::string_view token, GemmConfig& config) {
  return parse_key_fields(token, {{"c", &config.cluster_m}, {"x", &config.cluster_n}});
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
  switch (persistence) {
    case GemmPersistence::static_loop:
      return "static";
    case GemmPersistence::dynamic_loop:
      return "dynamic";
    case GemmPersistence::stream_k:
      return "streamk";
    case GemmPersistence::grid:
      break;
  }
  return "grid";
}

std::string_view to_string(SwizzleAxis axis) {
  return axis == SwizzleAxis::m ? "m" : "n";
}

std::optional<GemmPersistence> parse_gemm_persistence(std::string_view text) {
  if (text == "grid") return GemmPersistence::grid;
  if (text == "static") return GemmPersistence::static_loop;
  if (text == "dynamic") return GemmPersistence::dynamic_loop;
  if (text == "streamk") return GemmPersistence::stream_k;
  return std::nullopt;
}

std::string_view to_string(GemmConsumerMode mode) {
  return mode == GemmConsumerMode::pingpong ? "pingpong" : "cooperative";
}

std::optional<GemmConsumerMode> parse_gemm_consumer_mode(std::string_view text) {
  if (text == "cooperative") return GemmConsumerMode::cooperative;
  if (text == "pingpong") return GemmConsumerMode::pingpong;
  return std::nullopt;
}

std::optional<SwizzleAxis> parse_swizzle_axis(std::string_view text) {
  if (text == "n") return SwizzleAxis::n;
  if (text == "m") return SwizzleAxis::m;
  return std::nullopt;
}

std::string GemmConfig::key() const {
  if (is_wgmma(*this)) {
    std::string key(kWgmmaPrefix);
    key += '-';
    key += key_fields_text({{"m", block_m}, {"n", block_n}, {"k", block_k}, {"s", stages}});
    key += '-';
    key += to_string(consumer_mode);
    key += '-';
    key += key_fields_text({{"c", cluster_m}, {"x", cluster_n}});
    key += '-';
    if (transposed) {
      key += kTransposedToken;
      key += '-';
    }
    key += to_string(persistence);
    key += '-';
    key += swizzle_token(*this);
    return key;
  }
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
  GemmConfig config;
  if ((parts.size() == 6 || parts.size() == 7) && parts[0] == kWgmmaPrefix) {
    config.path = InstructionPath::wgmma;
    if (parts.size() == 7) {
      if (parts[4] != kTransposedToken) return std::nullopt;
      config.transposed = true;
    }
    if (!parse_wgmma_tile_token(parts[1], config)) return std::nullopt;
    const std::optional<GemmConsumerMode> mode = parse_gemm_consumer_mode(parts[2]);
    if (!mode) return std::nullopt;
    config.consumer_mode = *mode;
    if (!parse_cluster_token(parts[3], config)) return std::nullopt;
  } else if (parts.size() != 3) {
    return std::nullopt;
  } else if (!parse_tile_token(parts[0], config)) {
    return std::nullopt;
  }
  const std::size_t tail = parts.size() - 2;  // persistence, then swizzle
  const std::optional<GemmPersistence> persistence = is_wgmma(config)
                                                         ? parse_wgmma_persistence(parts[tail])
                                                         : parse_mma_sync_persistence(parts[tail]);
  if (!persistence) return std::nullopt;
  config.persistence = *persistence;
  if (!parse_swizzle_token(parts[tail + 1], config)) return std::nullopt;
  // Only the canonical spelling is a key: the same kernel must never have two.
  if (config.key() != key) return std::nullopt;
  return config;
}

nlohmann::json GemmConfig::to_json() const {
  if (is_wgmma(*this)) {
    nlohmann::json json = {{"path", std::string(swr::to_string(path))},
                           {"block_m", block_m},
                           {"block_n", block_n},
                           {"block_k", block_k},
                           {"stages", stages},
                           {"consumer_mode", std::string(to_string(consumer_mode))},
                           {"cluster_m", cluster_m},
                           {"cluster_n", cluster_n},
                           {"persistence", std::string(to_string(persistence))},
                           {"swizzle_stride", swizzle_stride},
                           {"swizzle_axis", std::string(to_string(swizzle_axis))}};
    // Only when set: the rows stored before it existed keep their exact text.
    if (transposed) json["transposed"] = true;
    return json;
  }
  // No "path": the rows stored before wgmma existed keep their exact text.
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
  if (json.contains("path")) {
    config.path = fields.one_of("path", &parse_instruction_path, "\"mma_sync\", \"wgmma\"");
  }
  config.block_m = fields.int_at_least("block_m", 1);
  config.block_n = fields.int_at_least("block_n", 1);
  config.block_k = fields.int_at_least("block_k", 1);
  if (is_wgmma(config)) {
    config.consumer_mode =
        fields.one_of("consumer_mode", &parse_gemm_consumer_mode, "\"cooperative\", \"pingpong\"");
    config.cluster_m = fields.int_at_least("cluster_m", 1);
    config.cluster_n = fields.int_at_least("cluster_n", 1);
    if (json.contains("transposed")) config.transposed = fields.boolean("transposed");
  } else {
    config.warps_m = fields.int_at_least("warps_m", 1);
    config.warps_n = fields.int_at_least("warps_n", 1);
  }
  config.stages = fields.int_at_least("stages", 1);
  config.persistence = is_wgmma(config) ? fields.one_of("persistence", &parse_wgmma_persistence,
                                                        "\"static\", \"dynamic\", \"streamk\"")
                                        : fields.one_of("persistence", &parse_mma_sync_persistence,
                                                        "\"grid\", \"static\"");
  config.swizzle_stride = fields.int_at_least("swizzle_stride", 0);
  config.swizzle_axis = fields.one_of("swizzle_axis", &parse_swizzle_axis, "\"m\", \"n\"");
  // Stride 0 is plain row-major whatever the axis: keep one spelling of it.
  if (config.swizzle_stride == 0) config.swizzle_axis = SwizzleAxis::n;
  return config;
}

}  // namespace swr
