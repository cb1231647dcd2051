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

void print_failures(std::ostream& out, const std::vector<db::StoredMeasurement>& measured) {
  for (const db::StoredMeasurement& measurement : measured) {
    if (is_valid_measurement(measurement)) continue;
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
