#include "report/roofline_points.hpp"

#include <algorithm>

namespace swr::report {
namespace {

std::string group_of(const db::StoredProblem& problem) {
  if (problem.attention) {
    return "attention D" + std::to_string(problem.attention->head_dim) +
           (problem.attention->causal ? " causal" : "");
  }
  if (problem.family == "gemm") return "GEMM " + problem.json.value("dtype", std::string());
  return problem.family;
}

}  // namespace

std::optional<double> Roofline::ridge_intensity() const {
  if (!peak_tflops || !bandwidth_tb_per_s || *bandwidth_tb_per_s <= 0) return std::nullopt;
  return *peak_tflops / *bandwidth_tb_per_s;  // TFLOP/s over TB/s = FLOP/byte
}

Roofline roofline_of(const GpuResults& results) {
  Roofline roofline;
  if (results.profile && results.profile->peak_tensor_flops > 0 &&
      results.profile->dram_bytes_per_second > 0) {
    roofline.peak_tflops = results.profile->peak_tensor_flops / 1e12;
    roofline.bandwidth_tb_per_s = results.profile->dram_bytes_per_second / 1e12;
  }
  for (const ProblemResults& problem : results.problems) {
    const db::StoredMeasurement* best = problem.best();
    if (!best) continue;
    const db::MeasurementRecord& record = best->record;
    if (!record.observed_intensity || *record.observed_intensity <= 0 || !record.tflops ||
        *record.tflops <= 0) {
      ++roofline.best_without_counters;
      continue;
    }
    RooflinePoint point;
    point.group = group_of(problem.problem);
    point.label = describe_problem(problem.problem);
    point.config_key = best->config_key;
    point.observed_intensity = *record.observed_intensity;
    point.algorithmic_intensity = record.algorithmic_intensity;
    point.tflops = *record.tflops;
    point.roofline_fraction = record.roofline_fraction;
    if (std::find(roofline.groups.begin(), roofline.groups.end(), point.group) ==
        roofline.groups.end()) {
      roofline.groups.push_back(point.group);
    }
    roofline.points.push_back(std::move(point));
  }
  return roofline;
}

}  // namespace swr::report
