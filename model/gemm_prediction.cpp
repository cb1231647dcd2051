#include "model/gemm_prediction.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "generator/gemm_swizzle.hpp"
#include "generator/resource_model.hpp"
#include "model/calibration_check.hpp"
#include "model/model_profile.hpp"
#include "support/parallel_for.hpp"

namespace swr::model {
namespace {

// What the replay depends on: tile, cluster, the order the swizzle gives, CTAs resident.
using ScheduleKey = std::tuple<int, int, int, int, int, bool, std::string, int>;

std::string printf_text(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string stride_name(const GemmConfig& config) {
  if (config.swizzle_stride == 0) return "0";
  return std::string(to_string(config.swizzle_axis)) + std::to_string(config.swizzle_stride);
}

}  // namespace

nlohmann::json GemmPrediction::to_json() const {
  nlohmann::json json = {{"config", config_key},
                         {"config_json", config.to_json()},
                         {"runnable", runnable},
                         {"note", note}};
  if (!runnable) return json;
  json["ctas_per_sm"] = ctas_per_sm;
  json["requested_sectors"] = traffic.requested_sectors;
  json["compulsory_misses"] = traffic.compulsory_misses;
  json["misses"] = traffic.misses;
  json["hit_rate"] = traffic.hit_rate;
  json["dram_bytes_read"] = traffic.dram_bytes_read;
  json["dram_bytes_written"] = traffic.dram_bytes_written;
  json["predicted_seconds"] = time.seconds;
  json["compute_seconds"] = time.compute_seconds;
  json["memory_seconds"] = time.memory_seconds;
  json["predicted_tflops"] = tflops;
  json["bound"] = time.bound;
  json["time_rule"] = time.rule;
  json["calibrated_on"] = time.calibrated_on;
  return json;
}

std::vector<GemmPrediction> predict_gemm_space(const GemmProblem& problem, const GpuProfile& gpu,
                                               const std::vector<GemmConfig>& configs,
                                               const TimeModel* model, int threads,
                                               const std::vector<int>& compiled_registers) {
  problem.validate();
  validate_model_profile(gpu);
  std::vector<GemmPrediction> predictions(configs.size());
  std::map<ScheduleKey, std::size_t> job_by_key;
  std::vector<std::size_t> job_config;
  std::vector<std::size_t> job_of(configs.size(), 0);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    GemmPrediction& prediction = predictions[i];
    prediction.config = configs[i];
    prediction.config_key = configs[i].key();
    const int registers = compiled_registers.empty() ? -1 : compiled_registers[i];
    const ResourceUse use = gemm_resource_use(configs[i], gpu, registers);
    if (!use.does_not_fit.empty()) {
      prediction.runnable = false;
      prediction.note = "does not run on " + gpu.name + ": " + use.does_not_fit;
      continue;
    }
    prediction.ctas_per_sm = use.blocks_per_sm;
    prediction.note = registers > 0 ? "occupancy from the compiled kernel (" +
                                          std::to_string(registers) + " registers)"
                                    : "occupancy from estimated registers";
    const SwizzleLaunch swizzle = swizzle_launch(configs[i]);
    const GemmTileGrid raster = gemm_raster_grid(problem, configs[i]);
    // The order's name tells equal orders apart from equal arguments (a band as wide as the grid).
    const std::string order = gemm_tile_order_name(raster, swizzle);
    const ScheduleKey key{configs[i].block_m,
                          configs[i].block_n,
                          configs[i].block_k,
                          configs[i].cluster_m,
                          configs[i].cluster_n,
                          configs[i].transposed,
                          order,
                          gpu.sm_count * use.blocks_per_sm};
    const auto [entry, inserted] = job_by_key.try_emplace(key, job_config.size());
    if (inserted) job_config.push_back(i);
    job_of[i] = entry->second;
  }
  std::vector<GemmTraffic> traffic(job_config.size());
  std::vector<std::string> failures(job_config.size());
  parallel_for(job_config.size(), threads, [&](std::size_t job) {
    const std::size_t i = job_config[job];
    try {
      traffic[job] =
          simulate_gemm_l2(problem, configs[i], gpu, gpu.sm_count * predictions[i].ctas_per_sm);
    } catch (const std::exception& error) {
      failures[job] = error.what();
    }
  });
  for (std::size_t i = 0; i < configs.size(); ++i) {
    GemmPrediction& prediction = predictions[i];
    if (!prediction.runnable) continue;
    if (!failures[job_of[i]].empty()) {
      prediction.runnable = false;
      prediction.note = failures[job_of[i]];
      continue;
    }
    prediction.traffic = traffic[job_of[i]];
    const double dram = static_cast<double>(prediction.traffic.dram_bytes_read +
                                            prediction.traffic.dram_bytes_written);
    if (model) {
      prediction.time = model->gemm(problem, configs[i], gpu, prediction.ctas_per_sm, dram);
    } else {
      prediction.time.memory_seconds = dram / gpu.dram_bytes_per_second;
      prediction.time.seconds = prediction.time.memory_seconds;
      prediction.time.bound = "memory";
      prediction.time.rule = "none";
    }
    prediction.tflops =
        prediction.time.seconds > 0 ? problem.flops() / prediction.time.seconds / 1e12 : 0;
  }
  return predictions;
}

namespace {

std::vector<const GemmPrediction*> ranked(const std::vector<GemmPrediction>& predictions) {
  std::vector<const GemmPrediction*> order;
  for (const GemmPrediction& prediction : predictions) {
    if (prediction.runnable) order.push_back(&prediction);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    if (a->time.seconds != b->time.seconds) return a->time.seconds < b->time.seconds;
    return a->traffic.misses < b->traffic.misses;
  });
  return order;
}

}  // namespace

std::string format_gemm_prediction_table(const GemmProblem& problem, const GpuProfile& gpu,
                                         const std::vector<GemmPrediction>& predictions,
                                         const std::string& accuracy, std::size_t rows) {
  std::string text = "model for GEMM " + problem.key() + " on " + gpu.name + " (" +
                     gpu.description + "): predictions, not measurements\n";
  text += "L2 " + printf_text("%.0f MiB", gpu.l2_bytes / 1048576.0) + ", usable for shared data " +
          printf_text("%.0f MiB", static_cast<double>(usable_l2_bytes(gpu)) / 1048576.0) +
          ", peak " + printf_text("%.0f TFLOP/s", gpu.peak_tensor_flops / 1e12) + ", DRAM " +
          printf_text("%.0f GB/s", gpu.dram_bytes_per_second / 1e9) + "\n" + accuracy + "\n\n";
  char line[256];
  std::snprintf(line, sizeof(line), "%-46s %10s %10s %9s %9s %8s %8s  %s\n", "variant", "misses",
                "DRAM GB", "ms", "compute", "TFLOP/s", "bound", "step time from");
  text += line;
  const std::vector<const GemmPrediction*> order = ranked(predictions);
  for (std::size_t i = 0; i < order.size() && i < rows; ++i) {
    const GemmPrediction& p = *order[i];
    std::snprintf(line, sizeof(line), "%-46s %10.3g %10.3f %9.3f %9.3f %8.1f %8s  %s\n",
                  p.config_key.c_str(), static_cast<double>(p.traffic.misses),
                  (p.traffic.dram_bytes_read + p.traffic.dram_bytes_written) / 1e9,
                  p.time.seconds * 1e3, p.time.compute_seconds * 1e3, p.tflops,
                  p.time.bound.c_str(), p.time.rule.c_str());
    text += line;
  }
  if (order.size() > rows) {
    text += "... " + std::to_string(order.size() - rows) + " more (--json lists every variant)\n";
  }
  // Per kernel binary, the stride predicted fastest and what stride 0 would cost.
  std::map<std::string, std::pair<const GemmPrediction*, const GemmPrediction*>> binaries;
  for (const GemmPrediction* p : order) {
    auto& [best, plain] = binaries[compute_twin(p->config).key()];
    if (!best) best = p;
    if (p->config.swizzle_stride == 0 && !plain) plain = p;
  }
  text += "\nbest stride per kernel binary (predicted; stride 0 = plain row-major):\n";
  for (const auto& [binary, pair] : binaries) {
    const auto& [best, plain] = pair;
    text += "  " + binary + ": " + stride_name(best->config);
    if (plain && plain->time.seconds > 0) {
      text += printf_text(" (%.1f%% faster than stride 0)",
                          100 * (plain->time.seconds / best->time.seconds - 1));
    }
    text += "\n";
  }
  text +=
      "\nms: max(compute, DRAM) + overlap x min(compute, DRAM); compute from step times measured "
      "on the calibration GPU, DRAM from the L2 replay of each stride's tile order\n";
  for (const GemmPrediction& prediction : predictions) {
    if (!prediction.runnable)
      text += "not run: " + prediction.config_key + ": " + prediction.note + "\n";
  }
  return text;
}

nlohmann::json gemm_prediction_json(const GemmProblem& problem, const GpuProfile& gpu,
                                    const std::vector<GemmPrediction>& predictions) {
  nlohmann::json list = nlohmann::json::array();
  for (const GemmPrediction* prediction : ranked(predictions))
    list.push_back(prediction->to_json());
  for (const GemmPrediction& prediction : predictions) {
    if (!prediction.runnable) list.push_back(prediction.to_json());
  }
  return {{"kind", "prediction"},
          {"family", "gemm"},
          {"gpu", gpu.name},
          {"problem", problem.key()},
          {"usable_l2_bytes", usable_l2_bytes(gpu)},
          {"predictions", list}};
}

namespace {

// Per (shape, binary) of `measured` with two strides or more: predicted and measured best stride.
std::map<std::string, nlohmann::json> stride_figures(const TimeModel& model,
                                                     const std::vector<MeasuredGemm>& measured,
                                                     const GpuProfile& gpu) {
  std::map<std::string, std::vector<const MeasuredGemm*>> groups;
  for (const MeasuredGemm& variant : measured) {
    groups[variant.problem.key() + " " + compute_twin(variant.config).key()].push_back(&variant);
  }
  std::map<std::string, nlohmann::json> figures;
  for (const auto& [group, variants] : groups) {
    if (variants.size() < 2) continue;
    std::vector<GemmConfig> configs;
    std::vector<int> registers;
    for (const MeasuredGemm* variant : variants) {
      configs.push_back(variant->config);
      registers.push_back(variant->registers);
    }
    const std::vector<GemmPrediction> predictions =
        predict_gemm_space(variants.front()->problem, gpu, configs, &model, 0, registers);
    std::size_t predicted_best = 0, measured_best = 0, plain = variants.size();
    double error_sum = 0;
    int error_points = 0;
    for (std::size_t i = 0; i < variants.size(); ++i) {
      if (predictions[i].time.seconds < predictions[predicted_best].time.seconds)
        predicted_best = i;
      if (variants[i]->seconds < variants[measured_best]->seconds) measured_best = i;
      if (variants[i]->config.swizzle_stride == 0) plain = i;
      if (variants[i]->misses && *variants[i]->misses > 0) {
        error_sum +=
            std::abs(static_cast<double>(predictions[i].traffic.misses) - *variants[i]->misses) /
            *variants[i]->misses;
        ++error_points;
      }
    }
    const double best = variants[measured_best]->seconds;
    nlohmann::json entry = {
        {"strides", variants.size()},
        {"predicted_best_stride", stride_name(variants[predicted_best]->config)},
        {"measured_best_stride", stride_name(variants[measured_best]->config)},
        {"loss_percent", rounded(100 * (variants[predicted_best]->seconds / best - 1), 2)},
        {"misses_mape_percent", error_points ? rounded(100 * error_sum / error_points, 2) : 0.0},
        {"sensitivity_percent", 0.0}};
    double slowest = best;
    for (const MeasuredGemm* variant : variants) slowest = std::max(slowest, variant->seconds);
    entry["sensitivity_percent"] = rounded(100 * (1 - best / slowest), 2);
    if (plain < variants.size()) {
      entry["stride_0_loss_percent"] = rounded(100 * (variants[plain]->seconds / best - 1), 2);
    }
    figures[group] = entry;
  }
  return figures;
}

}  // namespace

nlohmann::json gemm_stride_check(const TimeCalibration& calibration,
                                 const GpuProfile& calibration_gpu,
                                 const std::vector<MeasuredGemm>& calibration_measurements,
                                 const std::vector<MeasuredGemm>& judged,
                                 const GpuProfile& judged_gpu) {
  const TimeModel model(calibration);
  const std::map<std::string, nlohmann::json> held_out = stride_figures(model, judged, judged_gpu);
  const std::map<std::string, nlohmann::json> in_sample =
      stride_figures(model, calibration_measurements, calibration_gpu);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [group, figures] : held_out) {
    const auto own = in_sample.find(group);
    list.push_back({{"shape_and_binary", group},
                    {"held_out", figures},
                    {"in_sample", own == in_sample.end() ? nlohmann::json(nullptr) : own->second}});
  }
  return list;
}

}  // namespace swr::model
