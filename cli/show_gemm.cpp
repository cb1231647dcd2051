#include "cli/show_views.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "swr/gemm_config.hpp"
#include "tuner/json_forms.hpp"
#include "tuner/text_format.hpp"
#include "tuner/tuning/result_table.hpp"
#include "tuner/tuning/variant_record.hpp"

namespace swr::cli {
namespace {

bool is_valid(const db::StoredMeasurement& measurement) {
  return measurement.record.status == db::MeasurementStatus::ok &&
         measurement.record.median_ms.has_value();
}

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

std::vector<SwizzleEffect> swizzle_effects(const std::vector<db::StoredMeasurement>& measured) {
  std::map<std::string, SwizzleEffect> by_binary;
  for (const db::StoredMeasurement& measurement : measured) {
    const std::optional<GemmConfig> config = GemmConfig::from_key(measurement.config_key);
    if (!config || !is_valid(measurement) || !measurement.record.tflops) continue;
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

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%", 100 * fraction);
  return text;
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

void print_failures(std::ostream& out, const std::vector<db::StoredMeasurement>& measured) {
  for (const db::StoredMeasurement& measurement : measured) {
    if (is_valid(measurement)) continue;
    out << "  failed " << measurement.config_key << ": " << db::to_string(measurement.record.status)
        << " (" << first_line(measurement.record.error) << ")\n";
  }
}

GpuProfile shown_profile(const db::StoredGpu& stored) {
  GpuProfile gpu;
  gpu.name = stored.gpu.name;
  gpu.description = stored.gpu.device_name;
  gpu.arch = stored.gpu.arch;
  gpu.sm_count = stored.gpu.sm_count;
  gpu.l2_bytes = stored.gpu.l2_bytes;
  return gpu;
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

}  // namespace

std::vector<db::StoredGpu> gpus_that_measured(const db::ResultsDatabase& database,
                                              const std::optional<db::ProblemId>& problem,
                                              const std::optional<std::set<std::int64_t>>& gpus) {
  std::vector<db::StoredGpu> measured_on;
  if (!problem) return measured_on;
  for (const db::ProblemSummary& summary : database.problem_summaries()) {
    if (summary.problem.id != *problem) continue;
    if (gpus && gpus->count(raw(summary.gpu.id)) == 0) continue;
    measured_on.push_back(summary.gpu);
  }
  return measured_on;
}

int show_gemm_shape(const db::ResultsDatabase& database, const GemmProblem& problem,
                    const std::optional<std::set<std::int64_t>>& gpus, bool json) {
  const std::optional<db::ProblemId> problem_id = database.find_problem(problem);
  const std::vector<db::StoredGpu> measured_on = gpus_that_measured(database, problem_id, gpus);

  nlohmann::json results = nlohmann::json::array();
  for (const db::StoredGpu& gpu : measured_on) {
    const std::vector<db::StoredMeasurement> measured =
        database.measurements_for(gpu.id, *problem_id);
    const GemmBaseline baseline = stored_gemm_baseline(measured);
    const std::vector<SwizzleEffect> effects = swizzle_effects(measured);
    if (json) {
      nlohmann::json variants = nlohmann::json::array();
      for (const db::StoredMeasurement& measurement : measured)
        variants.push_back(measurement_json(measurement));
      nlohmann::json swizzle = nlohmann::json::array();
      for (const SwizzleEffect& effect : effects) swizzle.push_back(effect_json(effect));
      nlohmann::json cublas = nullptr;
      if (baseline.median_ms) {
        cublas = {{"median_ms", *baseline.median_ms},
                  {"tflops", problem.flops() / *baseline.median_ms / 1e9},
                  {"version", baseline.version}};
      }
      results.push_back({{"gpu", stored_gpu_json(gpu)},
                         {"problem", stored_problem_json(database.problem(*problem_id))},
                         {"cublas", std::move(cublas)},
                         {"variants", std::move(variants)},
                         {"swizzle", std::move(swizzle)}});
      continue;
    }
    print_gemm_table(std::cout, problem, shown_profile(gpu), measured, baseline, measured.size());
    print_failures(std::cout, measured);
    print_swizzle_effects(std::cout, effects);
  }
  if (json) {
    std::cout << nlohmann::json{{"database", database.path().string()},
                                {"problem", problem.key()},
                                {"results", std::move(results)}}
                     .dump(2)
              << "\n";
  } else if (measured_on.empty()) {
    std::cout << "no results for gemm " << problem.key() << " in " << database.path().string()
              << "\n";
  }
  return 0;
}

}  // namespace swr::cli
