// The sawtooth idea's comparison in the tables: an attention variant of either pass and its twin,
// the same config with the other walk order (forward: over K/V tiles; backward: over Q tiles).
#pragma once

#include <optional>
#include <string>

#include "swr/attention_config.hpp"

namespace swr {

// The walk order of a config key of either attention pass; nullopt for any other key.
std::optional<KvOrder> walk_order_of(const std::string& config_key);
// The key of the same config with the other walk order; nullopt for a key of no attention pass.
std::optional<std::string> walk_order_twin(const std::string& config_key);

}  // namespace swr
