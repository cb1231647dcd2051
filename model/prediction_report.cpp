#include "model/prediction_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "model/model_profile.hpp"

namespace swr::model {
namespace {

bool usable(const ModelPrediction* prediction) {
  return prediction && prediction->runnable;
}

// "m128n64w8s2-sawtooth-static-head_major" -> "m128n64w8s2-static-head_major"
std::string variant_without_order(const ModelPrediction& prediction) {
  const std::string_view key = prediction.config_key;
  const std::string_view order = to_string(prediction.config.order);
  const std::size_t at = key.find(order);
  if (at == std::string_view::npos || at == 0 || at + order.size() >= key.size()) {
    return std::string(key);
  }
  // Drop the order and the dash after it.
  return std::string(key.substr(0, at)) + std::string(key.substr(at + order.size() + 1));
}

std::string printf_text(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

// 370123456 -> "370.1M"
std::string count_text(double count) {
  const char* suffixes[] = {"", "K", "M", "G", "T"};
  int index = 0;
  while (std::fabs(count) >= 1000 && index < 4) {
    count /= 1000;
    ++index;
  }
  return printf_text(index == 0 ? "%.0f" : "%.1f", count) + suffixes[index];
}

std::string mib_text(double bytes) {
  return printf_text("%.1f MiB", bytes / (1024.0 * 1024.0));
}

std::string pad(const std::string& text, std::size_t width, bool right = true) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

// Misses, hit rate and time of one side of a pair, or dashes.
std::vector<std::string> side_cells(const ModelPrediction* prediction) {
  if (!usable(prediction)) return {"-", "-", "-"};
  const std::string mark = prediction->sampled ? "*" : "";
  return {count_text(static_cast<double>(prediction->misses)) + mark,
          printf_text("%.1f%%", 100.0 * prediction->hit_rate),
          printf_text("%.3f", prediction->predicted_seconds * 1e3)};
}

// Built-in profiles the model has been checked on, e.g. "h200"; "none" when none.
std::string checked_profile_names() {
  std::string names;
  for (const GpuProfile& profile : builtin_gpu_profiles()) {
    if (profile.model_calibration) names += (names.empty() ? "" : ", ") + profile.name;
  }
  return names.empty() ? "none" : names;
}

}  // namespace

const ModelPrediction* TwinPredictions::best() const {
  if (!usable(cyclic)) return usable(sawtooth) ? sawtooth : nullptr;
  if (!usable(sawtooth)) return cyclic;
  if (sawtooth->predicted_seconds != cyclic->predicted_seconds) {
    return sawtooth->predicted_seconds < cyclic->predicted_seconds ? sawtooth : cyclic;
  }
  return sawtooth->misses < cyclic->misses ? sawtooth : cyclic;
}

double TwinPredictions::miss_reduction() const {
  if (!usable(cyclic) || !usable(sawtooth)) return 0;
  const double extra = static_cast<double>(cyclic->misses - cyclic->compulsory_misses);
  if (extra <= 0) return 0;
  return static_cast<double>(cyclic->misses - sawtooth->misses) / extra;
}

double TwinPredictions::best_seconds() const {
  const ModelPrediction* fastest = best();
  return fastest ? fastest->predicted_seconds : std::numeric_limits<double>::infinity();
}

std::vector<TwinPredictions> pair_twins(const std::vector<ModelPrediction>& predictions) {
  std::vector<TwinPredictions> twins;
  std::map<std::string, std::size_t> index;
  for (const ModelPrediction& prediction : predictions) {
    if (!prediction.runnable) continue;
    const std::string variant = variant_without_order(prediction);
    const auto [entry, inserted] = index.try_emplace(variant, twins.size());
    if (inserted) twins.push_back(TwinPredictions{variant});
    TwinPredictions& twin = twins[entry->second];
    (prediction.config.order == KvOrder::cyclic ? twin.cyclic : twin.sawtooth) = &prediction;
  }
  std::stable_sort(twins.begin(), twins.end(), [](const auto& a, const auto& b) {
    if (a.best_seconds() != b.best_seconds()) return a.best_seconds() < b.best_seconds();
    return a.best()->misses < b.best()->misses;
  });
  return twins;
}

namespace {

// "in sample / held out"
std::string both_text(const char* format, double in_sample, double held_out) {
  return printf_text(format, in_sample) + " / " + printf_text(format, held_out);
}

}  // namespace

std::string calibration_text(const GpuProfile& gpu) {
  if (!gpu.model_calibration) {
    return "model not checked against hardware counters on " + gpu.name +
           " (checked on: " + checked_profile_names() + ")";
  }
  const GpuProfile::ModelCalibration& check = *gpu.model_calibration;
  const auto& in = check.in_sample;
  const auto& out = check.held_out;
  return "model checked against counters on " + check.checked_on + " (" + check.evidence +
         "), in sample / held out (constants refitted on " + check.fit_set + "):\n  " +
         std::to_string(in.points) + " / " + std::to_string(out.points) +
         " points, L2 misses off by " +
         both_text("%.1f%%", in.misses_mape_percent, out.misses_mape_percent) +
         ", rank correlation pooled " + both_text("%.3f", in.pooled_spearman, out.pooled_spearman) +
         ", within a shape min " +
         both_text("%.3f", in.min_shape_spearman, out.min_shape_spearman) + " median " +
         both_text("%.3f", in.median_shape_spearman, out.median_shape_spearman) +
         ", variant pairs (misses >= 5% apart) ordered right " + std::to_string(in.pairs_ordered) +
         " of " + std::to_string(in.pairs) + " / " + std::to_string(out.pairs_ordered) + " of " +
         std::to_string(out.pairs);
}

namespace {

nlohmann::json figures_json(const GpuProfile::ModelCalibration::Figures& figures) {
  return {{"points", figures.points},
          {"misses_mape_percent", figures.misses_mape_percent},
          {"pooled_spearman", figures.pooled_spearman},
          {"min_shape_spearman", figures.min_shape_spearman},
          {"median_shape_spearman", figures.median_shape_spearman},
          {"pairs", figures.pairs},
          {"pairs_ordered", figures.pairs_ordered}};
}

}  // namespace

nlohmann::json calibration_json(const GpuProfile& gpu) {
  if (!gpu.model_calibration) return nullptr;
  const GpuProfile::ModelCalibration& check = *gpu.model_calibration;
  return {{"in_sample", figures_json(check.in_sample)},
          {"held_out", figures_json(check.held_out)},
          {"fit_set", check.fit_set},
          {"checked_on", check.checked_on},
          {"evidence", check.evidence}};
}

std::string format_prediction_table(const AttentionProblem& problem, const GpuProfile& gpu,
                                    const std::vector<ModelPrediction>& predictions) {
  std::string text = "L2 model for " + problem.key() + " on " + gpu.name + " (" + gpu.description +
                     "): predictions, not measurements\n";
  text += "K/V per head " + mib_text(problem.kv_bytes_per_head()) + ", usable L2 for shared data " +
          mib_text(static_cast<double>(usable_l2_bytes(gpu))) + ", peak " +
          printf_text("%.0f TFLOP/s", gpu.peak_tensor_flops / 1e12) + ", DRAM " +
          printf_text("%.0f GB/s", gpu.dram_bytes_per_second / 1e9) + "\n";
  text += calibration_text(gpu) + "\n";
  const std::vector<TwinPredictions> twins = pair_twins(predictions);
  if (!twins.empty()) {
    const ModelPrediction* any =
        usable(twins.front().cyclic) ? twins.front().cyclic : twins.front().sawtooth;
    text += "requested " + count_text(static_cast<double>(any->requested_sectors)) +
            " sectors by the best variant, compulsory misses " +
            count_text(static_cast<double>(any->compulsory_misses)) + "\n";
  }
  std::size_t variant_width = 30;
  for (const TwinPredictions& twin : twins) {
    variant_width = std::max(variant_width, twin.variant.size());
  }
  const std::vector<std::pair<std::string, std::size_t>> columns = {{"variant", variant_width},
                                                                    {"cyclic misses", 14},
                                                                    {"hit", 7},
                                                                    {"ms", 9},
                                                                    {"sawtooth misses", 16},
                                                                    {"hit", 7},
                                                                    {"ms", 9},
                                                                    {"saved", 7},
                                                                    {"TFLOP/s", 8},
                                                                    {"bound", 8},
                                                                    {"time from", 10}};
  std::string header;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    header += pad(columns[c].first, columns[c].second, c != 0 && c + 1 != columns.size()) +
              (c + 1 < columns.size() ? " " : "");
  }
  text += "\n" + header + "\n";
  bool any_sampled = false;
  for (const TwinPredictions& twin : twins) {
    const std::vector<std::string> cyclic = side_cells(twin.cyclic);
    const std::vector<std::string> sawtooth = side_cells(twin.sawtooth);
    const ModelPrediction* best = twin.best();
    any_sampled = any_sampled || (usable(twin.cyclic) && twin.cyclic->sampled) ||
                  (usable(twin.sawtooth) && twin.sawtooth->sampled);
    const bool both = usable(twin.cyclic) && usable(twin.sawtooth);
    const std::vector<std::string> cells = {
        twin.variant,
        cyclic[0],
        cyclic[1],
        cyclic[2],
        sawtooth[0],
        sawtooth[1],
        sawtooth[2],
        both ? printf_text("%.0f%%", 100.0 * twin.miss_reduction()) : "-",
        printf_text("%.1f", best->predicted_tflops),
        best->bound,
        best->time_rule};
    for (std::size_t c = 0; c < cells.size(); ++c) {
      text += pad(cells[c], columns[c].second, c != 0 && c + 1 != cells.size()) +
              (c + 1 < cells.size() ? " " : "");
    }
    text += "\n";
  }
  text +=
      "\nsaved: share of cyclic's non-compulsory misses that sawtooth avoids; ms: max(compute, "
      "DRAM) + overlap x min(compute, DRAM), compute from step times measured on the calibration "
      "GPU (time from: measured = this variant, twin = its order/swizzle twin, same tile, same "
      "path; D<n> = measured at head dim n only, the step scaled by D/n; roofline = no "
      "calibration), DRAM from the predicted misses\n";
  if (any_sampled) text += "*: sampled (the note in --json says how much was replayed)\n";
  for (const ModelPrediction& prediction : predictions) {
    if (!prediction.runnable)
      text += "not run: " + prediction.config_key + ": " + prediction.note + "\n";
  }
  return text;
}

nlohmann::json prediction_report_json(const AttentionProblem& problem, const GpuProfile& gpu,
                                      const std::vector<ModelPrediction>& predictions) {
  nlohmann::json twins = nlohmann::json::array();
  for (const TwinPredictions& twin : pair_twins(predictions)) {
    nlohmann::json entry = {{"variant", twin.variant}};
    entry["cyclic"] = usable(twin.cyclic) ? nlohmann::json(twin.cyclic->config_key) : nullptr;
    entry["sawtooth"] = usable(twin.sawtooth) ? nlohmann::json(twin.sawtooth->config_key) : nullptr;
    if (usable(twin.cyclic) && usable(twin.sawtooth)) {
      entry["miss_reduction"] = twin.miss_reduction();
    }
    entry["best_seconds"] = twin.best_seconds();
    twins.push_back(entry);
  }
  nlohmann::json list = nlohmann::json::array();
  for (const ModelPrediction& prediction : predictions) list.push_back(prediction.to_json());
  return {{"kind", "prediction"},
          {"gpu", gpu.name},
          {"problem", problem.key()},
          {"kv_bytes_per_head", problem.kv_bytes_per_head()},
          {"usable_l2_bytes", usable_l2_bytes(gpu)},
          {"calibration", calibration_json(gpu)},
          {"twins", twins},
          {"predictions", list}};
}

}  // namespace swr::model
