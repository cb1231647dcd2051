// One row of `swr-tune model`: what the L2 model predicts for a variant on a GPU profile,
// whether or not that GPU is present. Predictions are never measurements: they carry their
// `sampled` flag and a note on how they were computed.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "model/l2_simulator.hpp"
#include "model/time_model.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::model {

// Predicted kernel time from the roofline: the slower of doing the FLOPs at the profile's peak
// tensor rate and moving the DRAM bytes at its bandwidth. An upper bound on speed: it ignores
// latency, the softmax's non-tensor work and imperfect overlap, so it ranks variants by their
// DRAM traffic wherever that traffic is the bottleneck (GB10 at long sequences).
struct RooflineEstimate {
  double seconds = 0;          // max(compute_seconds, memory_seconds)
  double compute_seconds = 0;  // 0 when the profile's peak is unknown (0)
  double memory_seconds = 0;
  double tflops = 0;  // flops / seconds / 1e12
  std::string bound;  // "memory" or "compute"
};

RooflineEstimate roofline_estimate(double flops, double dram_bytes, const GpuProfile& gpu);

struct ModelPrediction {
  AttentionConfig config;
  std::string config_key;
  bool runnable = true;  // false: the variant does not fit the GPU; `note` says why
  std::int64_t requested_sectors = 0;
  std::int64_t compulsory_misses = 0;
  std::int64_t misses = 0;  // as lts__t_sectors_srcunit_tex_lookup_miss would count them
  double hit_rate = 0;
  std::int64_t dram_bytes_read = 0;
  std::int64_t dram_bytes_written = 0;
  // The time model's (model/time_model.hpp) where a calibration is given, else the roofline over
  // the predicted DRAM bytes.
  double predicted_seconds = 0;
  double predicted_tflops = 0;
  double compute_seconds = 0;
  double memory_seconds = 0;
  std::string bound;      // "memory" or "compute"
  std::string time_rule;  // "roofline", or how the time model found the step time ("measured", ...)
  std::string calibrated_on;    // the calibration point: "<shape> <config>"
  bool form_calibrated = true;  // TimeEstimate::form_calibrated
  int wave_size = 0;
  bool sampled = false;
  std::string note;

  std::int64_t dram_bytes() const { return dram_bytes_read + dram_bytes_written; }
  nlohmann::json to_json() const;
};

// Simulates one variant. Throws UsageError for an invalid problem, profile or variant.
ModelPrediction predict_variant(const AttentionProblem& problem, const GpuProfile& gpu,
                                const AttentionConfig& config,
                                const SimulationOptions& options = {});

// Every variant, in the order given. Variants that differ only in what the schedule cannot see
// (warps, stages with the same CTAs per SM) are simulated once; the rest run on `threads` worker
// threads (0: one per hardware thread). A variant that does not fit the GPU or the simulation
// budget comes back with runnable = false and the reason; a bad problem or profile throws.
// `compiled_registers` (empty, or one per config, -1 where unknown) are ptxas's register counts:
// they set the CTAs per SM, the estimate standing in where they are unknown.
std::vector<ModelPrediction> predict_space(const AttentionProblem& problem, const GpuProfile& gpu,
                                           const std::vector<AttentionConfig>& configs,
                                           const SimulationOptions& options = {}, int threads = 0,
                                           const std::vector<int>& compiled_registers = {});

// Replaces the roofline time of every runnable prediction by the time model's (CTAs per SM from
// its wave size, DRAM bytes from the simulation); predictions stay as they are without a model.
void apply_time_model(std::vector<ModelPrediction>& predictions, const AttentionProblem& problem,
                      const GpuProfile& gpu, const TimeModel* model);

}  // namespace swr::model
