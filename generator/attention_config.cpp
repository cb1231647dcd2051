#include "swr/attention_config.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generator/config_parsing.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

using config_parsing::key_fields_text;
using config_parsing::parse_key_fields;

constexpr std::string_view kFaultKeySuffix = "fault";
constexpr std::string_view kHangKeySuffix = "hang";
constexpr std::string_view kWgmmaKeyPrefix = "wgmma";
constexpr std::string_view kOverlapKeyToken = "ov";
constexpr std::string_view kPingpongKeyToken = "pp";
constexpr std::string_view kEvictLastKeyToken = "evl";
constexpr std::string_view kPInSmemKeyToken = "psm";

// "m128n64w8s2" -> block_m, block_n, warps, stages.
bool parse_tile_token(std::string_view token, AttentionConfig& config) {
  return parse_key_fields(token, {{"m", &config.block_m},
                                  {"n", &config.block_n},
                                  {"w", &config.warps},
                                  {"s", &config.stages}});
}

// "m128n176s2" -> block_m, block_n, stages; warps follow from block_m.
bool parse_wgmma_tile_token(std::string_view token, AttentionConfig& config) {
  if (!parse_key_fields(token,
                        {{"m", &config.block_m}, {"n", &config.block_n}, {"s", &config.stages}})) {
    return false;
  }
  config.warps = AttentionConfig::wgmma_warps(config.block_m);
  return true;
}

bool boolean_field(const nlohmann::json& json, const char* name) {
  const auto it = json.find(name);
  if (it == json.end() || !it->is_boolean()) {
    throw UsageError(std::string("config JSON: field \"") + name +
                     "\" must be true or false (got " +
                     (it == json.end() ? std::string("nothing") : it->dump()) + ")");
  }
  return it->get<bool>();
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

std::string_view to_string(KvCacheHint hint) {
  return hint == KvCacheHint::evict_last ? "evict_last" : "none";
}

std::optional<KvCacheHint> parse_kv_cache_hint(std::string_view text) {
  if (text == "none") return KvCacheHint::none;
  if (text == "evict_last") return KvCacheHint::evict_last;
  return std::nullopt;
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
  std::string key;
  if (is_wgmma()) {
    key = std::string(kWgmmaKeyPrefix) + '-' +
          key_fields_text({{"m", block_m}, {"n", block_n}, {"s", stages}});
    if (overlap) key += '-' + std::string(kOverlapKeyToken);
    if (pingpong) key += '-' + std::string(kPingpongKeyToken);
    if (kv_cache_hint == KvCacheHint::evict_last) key += '-' + std::string(kEvictLastKeyToken);
    if (p_in_smem) key += '-' + std::string(kPInSmemKeyToken);
  } else {
    key = key_fields_text({{"m", block_m}, {"n", block_n}, {"w", warps}, {"s", stages}});
  }
  key += '-';
  key += to_string(order);
  key += '-';
  key += to_string(persistence);
  key += '-';
  key += config_parsing::swizzle_key_token(swizzle, head_group);
  if (planted_fault) {
    key += '-';
    key += kFaultKeySuffix;
  }
  if (planted_hang) {
    key += '-';
    key += kHangKeySuffix;
  }
  return key;
}

std::optional<AttentionConfig> AttentionConfig::from_key(std::string_view key) {
  std::vector<std::string_view> parts = config_parsing::split(key, '-');
  AttentionConfig config;
  if (!parts.empty() && parts.front() == kWgmmaKeyPrefix) {
    parts.erase(parts.begin());
    if (parts.empty() || !parse_wgmma_tile_token(parts.front(), config)) return std::nullopt;
    config.path = InstructionPath::wgmma;
    // The on/off tokens between the tile and the schedule; key() below fixes their order.
    std::size_t next = 1;
    for (; next < parts.size(); ++next) {
      if (parts[next] == kOverlapKeyToken) {
        config.overlap = true;
      } else if (parts[next] == kPingpongKeyToken) {
        config.pingpong = true;
      } else if (parts[next] == kEvictLastKeyToken) {
        config.kv_cache_hint = KvCacheHint::evict_last;
      } else if (parts[next] == kPInSmemKeyToken) {
        config.p_in_smem = true;
      } else {
        break;
      }
    }
    parts.erase(parts.begin() + 1, parts.begin() + static_cast<std::ptrdiff_t>(next));
  } else if (parts.empty() || !parse_tile_token(parts.front(), config)) {
    return std::nullopt;
  }
  // The test-only suffixes, in key()'s order.
  if (parts.size() > 4 && parts.back() == kHangKeySuffix) {
    config.planted_hang = true;
    parts.pop_back();
  }
  if (parts.size() > 4 && parts.back() == kFaultKeySuffix) {
    config.planted_fault = true;
    parts.pop_back();
  }
  if (parts.size() != 4) return std::nullopt;
  const std::optional<KvOrder> order = parse_kv_order(parts[1]);
  const std::optional<Persistence> persistence = parse_persistence(parts[2]);
  if (!order || !persistence) return std::nullopt;
  config.order = *order;
  config.persistence = *persistence;
  if (!config_parsing::parse_swizzle_token(parts[3], config.swizzle, config.head_group)) {
    return std::nullopt;
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
  // mma_sync rows keep the form they were stored in: "path" and the wgmma knobs only for wgmma.
  if (is_wgmma()) {
    json["path"] = to_string(path);
    json["overlap"] = overlap;
    json["pingpong"] = pingpong;
    json["kv_cache_hint"] = to_string(kv_cache_hint);
    json["p_in_smem"] = p_in_smem;
  }
  // Only on the test-only variants, so the form of every other row stays as it was.
  if (planted_hang) json["planted_hang"] = true;
  return json;
}

AttentionConfig AttentionConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) {
    throw UsageError("config JSON must be an object (got " + json.dump() + ")");
  }
  const config_parsing::ConfigJsonFields fields(json, "config JSON");
  AttentionConfig config;
  if (json.contains("path")) {
    config.path = fields.one_of<InstructionPath>("path", parse_instruction_path, "mma_sync, wgmma");
  }
  if (config.is_wgmma()) {
    config.overlap = boolean_field(json, "overlap");
    config.pingpong = boolean_field(json, "pingpong");
    config.kv_cache_hint =
        fields.one_of<KvCacheHint>("kv_cache_hint", parse_kv_cache_hint, "none, evict_last");
    // Rows stored before the knob existed are RS-form variants.
    if (json.contains("p_in_smem")) config.p_in_smem = boolean_field(json, "p_in_smem");
  }
  config.block_m = fields.positive_int("block_m");
  config.block_n = fields.positive_int("block_n");
  config.warps = fields.positive_int("warps");
  config.stages = fields.positive_int("stages");
  config.order = fields.one_of<KvOrder>("order", parse_kv_order, "cyclic, sawtooth");
  config.persistence =
      fields.one_of<Persistence>("persistence", parse_persistence, "grid, static, dynamic");
  config.swizzle = fields.one_of<TileSwizzle>("swizzle", parse_tile_swizzle,
                                              "head_major, heads_interleaved, head_groups");
  // head_group only means something for head_groups; the other swizzles always carry 1.
  if (config.swizzle == TileSwizzle::head_groups) {
    config.head_group = fields.positive_int("head_group");
  }
  if (json.contains("planted_fault")) config.planted_fault = boolean_field(json, "planted_fault");
  if (json.contains("planted_hang")) config.planted_hang = boolean_field(json, "planted_hang");
  if (const auto it = json.find("key"); it != json.end()) {
    if (!it->is_string() || it->get<std::string>() != config.key()) {
      throw UsageError("config JSON: field \"key\" " + it->dump() +
                       " does not match the other fields (" + config.key() + ")");
    }
  }
  return config;
}

}  // namespace swr
