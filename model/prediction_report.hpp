// How `swr-tune model` shows predictions: a table with each cyclic variant beside its sawtooth
// twin (same tile, stages, persistence and swizzle), best first, and the same as JSON.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "model/model_prediction.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::model {

// A cyclic variant and its sawtooth twin; either may be missing from the predictions.
struct TwinPredictions {
  std::string variant;  // the config key without its order, e.g. "m128n64w8s2-static-head_major"
  const ModelPrediction* cyclic = nullptr;
  const ModelPrediction* sawtooth = nullptr;
  // Non-compulsory misses sawtooth saves, as a share of cyclic's (0 when cyclic has none).
  double miss_reduction() const;
  // The faster twin (on equal times, the one with fewer misses); null if neither runs.
  const ModelPrediction* best() const;
  double best_seconds() const;  // best()'s predicted time; +inf if none
};

// Twins of runnable variants, fastest first (ties: fewer misses); not-runnable ones are left out.
// The pointers point into `predictions`, which must outlive the result.
std::vector<TwinPredictions> pair_twins(const std::vector<ModelPrediction>& predictions);

// Two lines on how far the model has been checked on this GPU (the profile's calibration): in
// sample and held out side by side, pooled and within-shape rank agreement.
std::string calibration_text(const GpuProfile& gpu);
nlohmann::json calibration_json(const GpuProfile& gpu);  // null when never checked

// The table: a header naming the problem, GPU, K/V per head against the usable L2 and the
// compulsory misses, one line per twin pair, then the variants that do not run and why.
std::string format_prediction_table(const AttentionProblem& problem, const GpuProfile& gpu,
                                    const std::vector<ModelPrediction>& predictions);

// {"gpu", "problem", "usable_l2_bytes", "compulsory_misses", "twins": [...],
//  "predictions": [every prediction's to_json()]}
nlohmann::json prediction_report_json(const AttentionProblem& problem, const GpuProfile& gpu,
                                      const std::vector<ModelPrediction>& predictions);

}  // namespace swr::model
