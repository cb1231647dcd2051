// The config keys of both families (`--config`, database rows, manifests): from_key never throws,
// and a key it accepts names one config whose key and JSON form read back to the same config.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "swr/attention_config.hpp"
#include "swr/gemm_config.hpp"

namespace {

template <typename Config>
void check_round_trip(std::string_view key) {
  const std::optional<Config> config = Config::from_key(key);
  if (!config) return;
  const std::optional<Config> again = Config::from_key(config->key());
  if (!again || !(*again == *config)) __builtin_trap();
  if (!(Config::from_json(config->to_json()) == *config)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view key(reinterpret_cast<const char*>(data), size);
  check_round_trip<swr::AttentionConfig>(key);
  check_round_trip<swr::GemmConfig>(key);
  return 0;
}
