// How much the tile order (the block swizzle) mattered on one GEMM shape: per kernel binary (a
// config key without its swizzle), the plain order's TFLOP/s, the best and the worst order's, and
// the sensitivity (best - worst) / best; as `swr-tune show --family gemm` prints it and its JSON.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/records.hpp"

namespace swr {

// How much the tile order mattered for one kernel binary (a config key without its swizzle).
struct SwizzleEffect {
  std::string binary;
  std::optional<double> plain_tflops;  // swizzle stride 0
  std::string best_key;
  double best_tflops = 0;
  double worst_tflops = 0;
  int orders = 0;
  double sensitivity() const { return best_tflops > 0 ? 1 - worst_tflops / best_tflops : 0; }
};

// The binaries of the valid measurements, fastest best order first.
std::vector<SwizzleEffect> swizzle_effects(const std::vector<db::StoredMeasurement>& measured);
void print_swizzle_effects(std::ostream& out, const std::vector<SwizzleEffect>& effects);
nlohmann::json effect_json(const SwizzleEffect& effect);

}  // namespace swr
