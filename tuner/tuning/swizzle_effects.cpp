#include "tuner/tuning/swizzle_effects.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <ostream>

#include "swr/gemm_config.hpp"
#include "tuner/text_format.hpp"
#include "tuner/tuning/result_table.hpp"

namespace swr {
namespace {

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%", 100 * fraction);
  return text;
}

}  // namespace

std::vector<SwizzleEffect> swizzle_effects(const std::vector<db::StoredMeasurement>& measured) {
  std::map<std::string, SwizzleEffect> by_binary;
  for (const db::StoredMeasurement& measurement : measured) {
    const std::optional<GemmConfig> config = GemmConfig::from_key(measurement.config_key);
    if (!config || !is_valid_measurement(measurement) || !measurement.record.tflops) continue;
    const std::string key = config->key();
    const std::string binary = key.substr(0, key.rfind("-swz"));
    const double tflops = *measurement.record.tflops;
    SwizzleEffect& effect = by_binary[binary];
    if (effect.orders == 0 || tflops > effect.best_tflops) {
      effect.best_tflops = tflops;
      effect.best_key = key;
    }
    effect.worst_tflops = effect.orders == 0 ? tflops : std::min(effect.worst_tflops, tflops);
    if (config->swizzle_stride == 0) effect.plain_tflops = tflops;
    effect.binary = binary;
    ++effect.orders;
  }
  std::vector<SwizzleEffect> effects;
  for (auto& [binary, effect] : by_binary) effects.push_back(std::move(effect));
  std::sort(effects.begin(), effects.end(), [](const SwizzleEffect& a, const SwizzleEffect& b) {
    return a.best_tflops > b.best_tflops;
  });
  return effects;
}

void print_swizzle_effects(std::ostream& out, const std::vector<SwizzleEffect>& effects) {
  if (effects.empty()) return;
  out << "block swizzle per tile binary (TFLOP/s; sensitivity = (best - worst) / best):\n";
  TextTable table({"binary", ">plain", "best order", ">best", ">worst", ">orders", ">sensitivity"});
  for (const SwizzleEffect& effect : effects) {
    table.add_row({effect.binary, format_tflops(effect.plain_tflops),
                   effect.best_key.substr(effect.binary.size() + 1),
                   format_tflops(effect.best_tflops), format_tflops(effect.worst_tflops),
                   std::to_string(effect.orders), percent(effect.sensitivity())});
  }
  table.print(out, "  ");
}

nlohmann::json effect_json(const SwizzleEffect& effect) {
  return {{"binary", effect.binary},
          {"plain_tflops", effect.plain_tflops ? nlohmann::json(*effect.plain_tflops) : nullptr},
          {"best_config", effect.best_key},
          {"best_tflops", effect.best_tflops},
          {"worst_tflops", effect.worst_tflops},
          {"orders", effect.orders},
          {"sensitivity", effect.sensitivity()}};
}

}  // namespace swr
