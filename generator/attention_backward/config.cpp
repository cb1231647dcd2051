#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generator/config_parsing.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

constexpr std::string_view kBackwardKeyPrefix = "bwd";
constexpr std::string_view kWgmmaKeyToken = "wgmma";
constexpr std::string_view kLaggedKeyToken = "lag";
constexpr std::string_view kPairsKeyToken = "pair";
constexpr std::string_view kRegistersDqKeyToken = "red";
constexpr std::string_view kDeterministicKeyToken = "det";
constexpr std::string_view kFaultKeyToken = "fault";

}  // namespace

std::string_view to_string(DqAccumulation accumulation) {
  return accumulation == DqAccumulation::deterministic ? "deterministic" : "atomic";
}

std::optional<DqAccumulation> parse_dq_accumulation(std::string_view text) {
  if (text == "atomic") return DqAccumulation::atomic;
  if (text == "deterministic") return DqAccumulation::deterministic;
  return std::nullopt;
}

std::string_view to_string(ConsumerSync sync) {
  return sync == ConsumerSync::lagged ? "lagged" : "lockstep";
}

std::optional<ConsumerSync> parse_consumer_sync(std::string_view text) {
  if (text == "lockstep") return ConsumerSync::lockstep;
  if (text == "lagged") return ConsumerSync::lagged;
  return std::nullopt;
}

std::string AttentionBackwardConfig::key() const {
  std::string key(kBackwardKeyPrefix);
  if (path == InstructionPath::wgmma) key += '-' + std::string(kWgmmaKeyToken);
  key += '-' + config_parsing::key_fields_text(
                   {{"m", block_m}, {"n", block_n}, {"w", warps}, {"s", stages}});
  key += '-' + std::string(to_string(order));
  key += '-' + std::string(to_string(persistence));
  key += '-' + config_parsing::swizzle_key_token(swizzle, head_group);
  if (cta_pairs) key += '-' + std::string(kPairsKeyToken);
  if (consumers == ConsumerSync::lagged) key += '-' + std::string(kLaggedKeyToken);
  if (dq_from_registers) key += '-' + std::string(kRegistersDqKeyToken);
  if (dq == DqAccumulation::deterministic) key += '-' + std::string(kDeterministicKeyToken);
  if (planted_fault) key += '-' + std::string(kFaultKeyToken);
  return key;
}

std::optional<AttentionBackwardConfig> AttentionBackwardConfig::from_key(std::string_view key) {
  std::vector<std::string_view> parts = config_parsing::split(key, '-');
  if (parts.empty() || parts.front() != kBackwardKeyPrefix) return std::nullopt;
  parts.erase(parts.begin());
  AttentionBackwardConfig config;
  if (!parts.empty() && parts.front() == kWgmmaKeyToken) {
    config.path = InstructionPath::wgmma;
    parts.erase(parts.begin());
  }
  // The optional tokens after the schedule, in key()'s order.
  if (parts.size() > 4 && parts.back() == kFaultKeyToken) {
    config.planted_fault = true;
    parts.pop_back();
  }
  if (parts.size() > 4 && parts.back() == kDeterministicKeyToken) {
    config.dq = DqAccumulation::deterministic;
    parts.pop_back();
  }
  if (parts.size() > 4 && parts.back() == kRegistersDqKeyToken) {
    config.dq_from_registers = true;
    parts.pop_back();
  }
  if (parts.size() > 4 && parts.back() == kLaggedKeyToken) {
    config.consumers = ConsumerSync::lagged;
    parts.pop_back();
  }
  if (parts.size() > 4 && parts.back() == kPairsKeyToken) {
    config.cta_pairs = true;
    parts.pop_back();
  }
  if (parts.size() != 4) return std::nullopt;
  if (!config_parsing::parse_key_fields(parts[0], {{"m", &config.block_m},
                                                   {"n", &config.block_n},
                                                   {"w", &config.warps},
                                                   {"s", &config.stages}})) {
    return std::nullopt;
  }
  const std::optional<KvOrder> order = parse_kv_order(parts[1]);
  const std::optional<Persistence> persistence = parse_persistence(parts[2]);
  if (!order || !persistence) return std::nullopt;
  config.order = *order;
  config.persistence = *persistence;
  if (!config_parsing::parse_swizzle_token(parts[3], config.swizzle, config.head_group)) {
    return std::nullopt;
  }
  // Only the canonical spelling is a key.
  if (config.key() != key) return std::nullopt;
  return config;
}

nlohmann::json AttentionBackwardConfig::to_json() const {
  nlohmann::json json = {{"path", to_string(path)},
                         {"block_m", block_m},
                         {"block_n", block_n},
                         {"warps", warps},
                         {"stages", stages},
                         {"order", to_string(order)},
                         {"persistence", to_string(persistence)},
                         {"swizzle", to_string(swizzle)},
                         {"head_group", swizzle == TileSwizzle::head_groups ? head_group : 1},
                         {"dq", to_string(dq)},
                         {"consumers", to_string(consumers)},
                         {"cta_pairs", cta_pairs},
                         {"dq_from_registers", dq_from_registers},
                         {"key", key()}};
  if (planted_fault) json["planted_fault"] = true;
  return json;
}

AttentionBackwardConfig AttentionBackwardConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) {
    throw UsageError("backward config JSON must be an object (got " + json.dump() + ")");
  }
  const config_parsing::ConfigJsonFields fields(json, "backward config JSON");
  AttentionBackwardConfig config;
  config.path = fields.one_of<InstructionPath>("path", parse_instruction_path, "mma_sync, wgmma");
  config.block_m = fields.positive_int("block_m");
  config.block_n = fields.positive_int("block_n");
  config.warps = fields.positive_int("warps");
  config.stages = fields.positive_int("stages");
  config.order = fields.one_of<KvOrder>("order", parse_kv_order, "cyclic, sawtooth");
  config.persistence =
      fields.one_of<Persistence>("persistence", parse_persistence, "grid, static, dynamic");
  config.swizzle = fields.one_of<TileSwizzle>("swizzle", parse_tile_swizzle,
                                              "head_major, heads_interleaved, head_groups");
  if (config.swizzle == TileSwizzle::head_groups) {
    config.head_group = fields.positive_int("head_group");
  }
  config.dq = fields.one_of<DqAccumulation>("dq", parse_dq_accumulation, "atomic, deterministic");
  // Configs written before the knob are lockstep.
  if (json.contains("consumers")) {
    config.consumers =
        fields.one_of<ConsumerSync>("consumers", parse_consumer_sync, "lockstep, lagged");
  }
  // Configs written before the knob are single CTAs.
  if (json.contains("cta_pairs")) config.cta_pairs = fields.boolean("cta_pairs");
  // Configs written before the knob add dQ by the writer.
  if (json.contains("dq_from_registers")) {
    config.dq_from_registers = fields.boolean("dq_from_registers");
  }
  if (json.contains("planted_fault")) config.planted_fault = fields.boolean("planted_fault");
  if (const auto it = json.find("key"); it != json.end()) {
    if (!it->is_string() || it->get<std::string>() != config.key()) {
      throw UsageError("backward config JSON: field \"key\" " + it->dump() +
                       " does not match the other fields (" + config.key() + ")");
    }
  }
  return config;
}

}  // namespace swr
