#include "model/model_prediction.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "generator/resource_model.hpp"
#include "model/model_profile.hpp"
#include "support/parallel_for.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

ModelPrediction from_simulation(const AttentionProblem& problem, const GpuProfile& gpu,
                                const AttentionConfig& config, const SimulationResult& result) {
  ModelPrediction prediction;
  prediction.config = config;
  prediction.config_key = config.key();
  prediction.requested_sectors = result.requested.total();
  prediction.compulsory_misses = result.compulsory.total();
  prediction.misses = result.misses.total();
  prediction.hit_rate = result.hit_rate;
  prediction.dram_bytes_read = result.dram_bytes_read;
  prediction.dram_bytes_written = result.dram_bytes_written;
  const RooflineEstimate roofline =
      roofline_estimate(problem.flops(), static_cast<double>(prediction.dram_bytes()), gpu);
  prediction.predicted_seconds = roofline.seconds;
  prediction.predicted_tflops = roofline.tflops;
  prediction.compute_seconds = roofline.compute_seconds;
  prediction.memory_seconds = roofline.memory_seconds;
  prediction.bound = roofline.bound;
  prediction.time_rule = "roofline";
  prediction.wave_size = result.wave_size;
  prediction.sampled = result.sampled;
  prediction.note = result.note;
  if (gpu.peak_tensor_flops <= 0)
    prediction.note += "; peak tensor rate unknown: time is DRAM only";
  return prediction;
}

ModelPrediction not_runnable(const AttentionConfig& config, const std::string& reason) {
  ModelPrediction prediction;
  prediction.config = config;
  prediction.config_key = config.key();
  prediction.runnable = false;
  prediction.note = reason;
  return prediction;
}

// What the simulated schedule depends on: tiles, order, persistence, swizzle, CTAs resident.
using ScheduleKey = std::tuple<int, int, KvOrder, Persistence, TileSwizzle, int, int>;

ScheduleKey schedule_key(const AttentionConfig& config, int wave_size) {
  const int group = config.swizzle == TileSwizzle::head_groups ? config.head_group : 0;
  return {config.block_m, config.block_n, config.order, config.persistence,
          config.swizzle, group,          wave_size};
}

}  // namespace

RooflineEstimate roofline_estimate(double flops, double dram_bytes, const GpuProfile& gpu) {
  RooflineEstimate estimate;
  estimate.compute_seconds = gpu.peak_tensor_flops > 0 ? flops / gpu.peak_tensor_flops : 0.0;
  estimate.memory_seconds =
      gpu.dram_bytes_per_second > 0 ? dram_bytes / gpu.dram_bytes_per_second : 0.0;
  estimate.seconds = std::max(estimate.compute_seconds, estimate.memory_seconds);
  estimate.bound = estimate.memory_seconds >= estimate.compute_seconds ? "memory" : "compute";
  estimate.tflops = estimate.seconds > 0 ? flops / estimate.seconds / 1e12 : 0.0;
  return estimate;
}

nlohmann::json ModelPrediction::to_json() const {
  nlohmann::json json = {{"config", config_key},
                         {"config_json", config.to_json()},
                         {"runnable", runnable},
                         {"note", note}};
  if (!runnable) return json;
  json["requested_sectors"] = requested_sectors;
  json["compulsory_misses"] = compulsory_misses;
  json["misses"] = misses;
  json["hit_rate"] = hit_rate;
  json["dram_bytes_read"] = dram_bytes_read;
  json["dram_bytes_written"] = dram_bytes_written;
  json["predicted_seconds"] = predicted_seconds;
  json["predicted_tflops"] = predicted_tflops;
  json["compute_seconds"] = compute_seconds;
  json["memory_seconds"] = memory_seconds;
  json["bound"] = bound;
  json["time_rule"] = time_rule;
  json["calibrated_on"] = calibrated_on;
  json["form_calibrated"] = form_calibrated;
  json["wave_size"] = wave_size;
  json["sampled"] = sampled;
  return json;
}

ModelPrediction predict_variant(const AttentionProblem& problem, const GpuProfile& gpu,
                                const AttentionConfig& config, const SimulationOptions& options) {
  return from_simulation(problem, gpu, config, simulate_l2(problem, config, gpu, options));
}

std::vector<ModelPrediction> predict_space(const AttentionProblem& problem, const GpuProfile& gpu,
                                           const std::vector<AttentionConfig>& configs,
                                           const SimulationOptions& options, int threads,
                                           const std::vector<int>& compiled_registers) {
  if (!compiled_registers.empty() && compiled_registers.size() != configs.size()) {
    throw std::invalid_argument("predict_space: compiled_registers must match configs");
  }
  problem.validate();
  validate_model_profile(gpu);

  // Wave size per variant (resource model), then one simulation per distinct schedule.
  std::vector<ModelPrediction> predictions(configs.size());
  std::vector<int> job_of(configs.size(), -1);
  std::map<ScheduleKey, int> job_by_key;
  std::vector<std::size_t> job_config;  // the first variant of each job
  std::vector<int> job_wave_size;
  std::vector<std::string> occupancy_source(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    int wave_size = options.wave_size;
    if (wave_size <= 0) {
      // The compiled kernel's registers decide how many CTAs share an SM; the estimate is only a
      // fallback (it was 2x off for D=64 on the H200: 3 CTAs per SM estimated, 2 measured).
      const int registers = compiled_registers.empty() ? -1 : compiled_registers[i];
      const ResourceUse use = registers > 0
                                  ? attention_resource_use(problem, configs[i], gpu, registers)
                                  : attention_resource_use(problem, configs[i], gpu);
      occupancy_source[i] = registers > 0 ? "occupancy from the compiled kernel (" +
                                                std::to_string(registers) + " registers)"
                                          : "occupancy from estimated registers";
      if (!use.does_not_fit.empty()) {
        predictions[i] =
            not_runnable(configs[i], "does not run on " + gpu.name + ": " + use.does_not_fit);
        continue;
      }
      wave_size = gpu.sm_count * use.blocks_per_sm;
    }
    const auto [entry, inserted] = job_by_key.try_emplace(schedule_key(configs[i], wave_size),
                                                          static_cast<int>(job_config.size()));
    if (inserted) {
      job_config.push_back(i);
      job_wave_size.push_back(wave_size);
    }
    job_of[i] = entry->second;
  }

  std::vector<SimulationResult> results(job_config.size());
  std::vector<std::string> failures(job_config.size());
  parallel_for(job_config.size(), threads, [&](std::size_t job) {
    try {
      SimulationOptions job_options = options;
      job_options.wave_size = job_wave_size[job];
      results[job] = simulate_l2(problem, configs[job_config[job]], gpu, job_options);
    } catch (const std::exception& error) {  // budget refusals, out of memory
      failures[job] = error.what();
    }
  });

  for (std::size_t i = 0; i < configs.size(); ++i) {
    const int job = job_of[i];
    if (job < 0) continue;
    predictions[i] = failures[job].empty() ? from_simulation(problem, gpu, configs[i], results[job])
                                           : not_runnable(configs[i], failures[job]);
    if (!occupancy_source[i].empty()) predictions[i].note += "; " + occupancy_source[i];
  }
  return predictions;
}

void apply_time_model(std::vector<ModelPrediction>& predictions, const AttentionProblem& problem,
                      const GpuProfile& gpu, const TimeModel* model) {
  if (!model) return;
  for (ModelPrediction& prediction : predictions) {
    if (!prediction.runnable) continue;
    const int ctas_per_sm = std::max(1, prediction.wave_size / std::max(gpu.sm_count, 1));
    const TimeEstimate estimate = model->attention(problem, prediction.config, gpu, ctas_per_sm,
                                                   static_cast<double>(prediction.dram_bytes()));
    if (!estimate.known) continue;  // no step time for the path: the roofline stays
    prediction.predicted_seconds = estimate.seconds;
    prediction.predicted_tflops =
        estimate.seconds > 0 ? problem.flops() / estimate.seconds / 1e12 : 0;
    prediction.compute_seconds = estimate.compute_seconds;
    prediction.memory_seconds = estimate.memory_seconds;
    prediction.bound = estimate.bound;
    prediction.time_rule = estimate.rule;
    prediction.calibrated_on = estimate.calibrated_on;
    prediction.form_calibrated = estimate.form_calibrated;
  }
}

}  // namespace swr::model
