#include "model/transfer_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "model/calibration_check.hpp"
#include "model/gemm_prediction.hpp"
#include "model/model_prediction.hpp"

namespace swr {
// bench/results/model-transfer-h200-h100/transfer.json, embedded by model/CMakeLists.txt.
std::string_view embedded_transfer_check_json();
}  // namespace swr

namespace swr::model {
namespace {

constexpr double kTopKLoss = 0.02;

template <class Measured>
std::map<std::string, std::vector<const Measured*>> by_shape(const std::vector<Measured>& all) {
  std::map<std::string, std::vector<const Measured*>> shapes;
  for (const Measured& variant : all) shapes[variant.problem.key()].push_back(&variant);
  return shapes;
}

std::size_t index_of_min(const std::vector<double>& values) {
  return static_cast<std::size_t>(std::min_element(values.begin(), values.end()) - values.begin());
}

}  // namespace

RankingFigures ranking_figures(const std::vector<double>& predicted,
                               const std::vector<double>& measured) {
  RankingFigures figures;
  if (predicted.empty() || predicted.size() != measured.size()) return figures;
  figures.spearman = spearman(predicted, measured);
  figures.predicted_best = index_of_min(predicted);
  figures.measured_best = index_of_min(measured);
  const double best = measured[figures.measured_best];
  figures.regret = measured[figures.predicted_best] / best - 1;
  std::vector<std::size_t> order(predicted.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return predicted[a] < predicted[b]; });
  double found = measured[order[0]];
  for (std::size_t k = 0; k < order.size(); ++k) {
    found = std::min(found, measured[order[k]]);
    if (found <= best * (1 + kTopKLoss)) {
      figures.top_k_within_2_percent = static_cast<int>(k + 1);
      break;
    }
  }
  return figures;
}

nlohmann::json ShapeFigures::to_json() const {
  return {{"shape", shape},
          {"variants", variants},
          {"spearman", rounded(spearman, 4)},
          {"regret_percent", rounded(100 * regret, 2)},
          {"predicted_best", predicted_best},
          {"measured_best", measured_best},
          {"misses_mape_percent", rounded(misses_mape_percent, 2)},
          {"misses_points", misses_points},
          {"misses_mape_by_persistence_percent",
           [&] {
             nlohmann::json by = nlohmann::json::object();
             for (const auto& [rule, mape] : misses_mape_by_persistence_percent) {
               by[rule] = rounded(mape, 2);
             }
             return by;
           }()},
          {"top_k_within_2_percent", top_k_within_2_percent},
          {"spearman_same_shape", rounded(spearman_same_shape, 4)},
          {"regret_same_shape_percent", rounded(100 * regret_same_shape, 2)}};
}

std::vector<ShapeFigures> attention_figures(const TimeCalibration& calibration,
                                            const std::vector<MeasuredAttention>& measured,
                                            const GpuProfile& gpu) {
  const TimeModel model(calibration, CalibrationShapes::fits_l2);
  const TimeModel same_shape_model(calibration, CalibrationShapes::any_shape);
  std::vector<ShapeFigures> figures;
  for (const auto& [shape, variants] : by_shape(measured)) {
    std::vector<AttentionConfig> configs;
    std::vector<int> registers;
    for (const MeasuredAttention* variant : variants) {
      configs.push_back(variant->config);
      registers.push_back(variant->registers);
    }
    const AttentionProblem& problem = variants.front()->problem;
    std::vector<ModelPrediction> predictions =
        predict_space(problem, gpu, configs, {}, 0, registers);
    std::vector<ModelPrediction> same_shape = predictions;
    apply_time_model(predictions, problem, gpu, &model);
    apply_time_model(same_shape, problem, gpu, &same_shape_model);

    ShapeFigures entry;
    entry.shape = shape;
    std::vector<double> predicted, predicted_same_shape, times;
    std::vector<const MeasuredAttention*> kept;
    double error_sum = 0;
    std::map<std::string, std::pair<double, int>> by_persistence;  // error sum, points
    for (std::size_t i = 0; i < variants.size(); ++i) {
      if (!predictions[i].runnable) continue;  // the model refuses it: left out, counted below
      kept.push_back(variants[i]);
      predicted.push_back(predictions[i].predicted_seconds);
      predicted_same_shape.push_back(same_shape[i].predicted_seconds);
      times.push_back(variants[i]->seconds);
      if (variants[i]->misses && *variants[i]->misses > 0) {
        const double error =
            std::abs(static_cast<double>(predictions[i].misses) - *variants[i]->misses) /
            *variants[i]->misses;
        error_sum += error;
        ++entry.misses_points;
        auto& [sum, points] =
            by_persistence[std::string(to_string(variants[i]->config.persistence))];
        sum += error;
        ++points;
      }
    }
    entry.variants = static_cast<int>(kept.size());
    if (kept.empty()) continue;
    const RankingFigures ranking = ranking_figures(predicted, times);
    const RankingFigures same_shape_ranking = ranking_figures(predicted_same_shape, times);
    entry.spearman = ranking.spearman;
    entry.regret = ranking.regret;
    entry.predicted_best = kept[ranking.predicted_best]->config.key();
    entry.measured_best = kept[ranking.measured_best]->config.key();
    entry.misses_mape_percent = entry.misses_points ? 100 * error_sum / entry.misses_points : 0;
    for (const auto& [rule, sum_points] : by_persistence) {
      entry.misses_mape_by_persistence_percent[rule] = 100 * sum_points.first / sum_points.second;
    }
    entry.top_k_within_2_percent = ranking.top_k_within_2_percent;
    entry.spearman_same_shape = same_shape_ranking.spearman;
    entry.regret_same_shape = same_shape_ranking.regret;
    figures.push_back(std::move(entry));
  }
  return figures;
}

nlohmann::json transfer_check(const TimeCalibration& calibration, const GpuProfile& calibration_gpu,
                              const std::vector<MeasuredAttention>& calibration_measurements,
                              const std::vector<MeasuredGemm>& calibration_gemm,
                              const JudgedMeasurements& judged, const GpuProfile& judged_gpu) {
  // In sample: the calibration GPU's measurements of the judged shapes only.
  std::set<std::string> judged_shapes;
  for (const MeasuredAttention& variant : judged.attention) {
    judged_shapes.insert(variant.problem.key());
  }
  std::vector<MeasuredAttention> in_sample;
  for (const MeasuredAttention& variant : calibration_measurements) {
    if (judged_shapes.count(variant.problem.key())) in_sample.push_back(variant);
  }
  const std::vector<ShapeFigures> held_out =
      attention_figures(calibration, judged.attention, judged_gpu);
  const std::vector<ShapeFigures> own = attention_figures(calibration, in_sample, calibration_gpu);
  nlohmann::json shapes = nlohmann::json::array();
  for (const ShapeFigures& figures : held_out) {
    nlohmann::json entry = {{"shape", figures.shape}, {"held_out", figures.to_json()}};
    entry["in_sample"] = nullptr;
    for (const ShapeFigures& mine : own) {
      if (mine.shape == figures.shape) entry["in_sample"] = mine.to_json();
    }
    shapes.push_back(entry);
  }
  // The --model-top tunes: the best of what they measured against the full tune's best.
  nlohmann::json model_top = nlohmann::json::array();
  const auto full = by_shape(judged.attention);
  for (const auto& [shape, variants] : by_shape(judged.model_top)) {
    const auto reference = full.find(shape);
    if (reference == full.end()) continue;
    const auto fastest = [](const auto& list) {
      return *std::min_element(list.begin(), list.end(), [](const auto* a, const auto* b) {
        return a->seconds < b->seconds;
      });
    };
    const MeasuredAttention* best = fastest(variants);
    const MeasuredAttention* full_best = fastest(reference->second);
    int top = 0;
    for (const MeasuredAttention* variant : variants) top += variant->model_check ? 0 : 1;
    // The variants both tunes measured: how far two measurements of one variant lie apart, the
    // scale to read the loss on.
    std::vector<double> repeat_differences;
    for (const MeasuredAttention* variant : variants) {
      for (const MeasuredAttention* again : reference->second) {
        if (again->config == variant->config && again->seconds > 0 && variant->seconds > 0) {
          repeat_differences.push_back(100 * std::abs(variant->seconds / again->seconds - 1));
        }
      }
    }
    model_top.push_back(
        {{"shape", shape},
         {"measured", variants.size()},
         {"top_k", top},
         {"full_tune_variants", reference->second.size()},
         {"best", best->config.key()},
         {"best_predicted_rank", best->predicted_rank},
         {"best_is_a_check", best->model_check},
         {"full_tune_best", full_best->config.key()},
         {"loss_percent", rounded(100 * (best->seconds / full_best->seconds - 1), 2)},
         {"measured_in_both", repeat_differences.size()},
         {"median_repeat_difference_percent",
          repeat_differences.empty() ? 0.0 : rounded(median(repeat_differences), 2)}});
  }
  return {{"calibration_gpu", calibration_gpu.name},
          {"judged_gpu", judged_gpu.name},
          {"calibration_evidence", calibration.evidence},
          {"judged_evidence", judged.evidence},
          {"judged_on", judged.attention.empty() ? std::string()
                                                 : judged.attention.front().device + ", " +
                                                       judged.attention.front().measured_on},
          {"about",
           "held_out: the judged GPU's measurements against predictions from a calibration fitted "
           "on the calibration GPU alone; in_sample: the calibration GPU's own measurements of the "
           "same shapes. Step times come from shapes whose K/V per head fits the usable L2; "
           "*_same_shape: also from the calibration GPU's measurement of the same shape"},
          {"attention", shapes},
          {"model_top", model_top},
          {"gemm", gemm_stride_check(calibration, calibration_gpu, calibration_gemm, judged.gemm,
                                     judged_gpu)}};
}

const nlohmann::json& embedded_transfer_check() {
  static const nlohmann::json transfer = [] {
    const std::string_view text = embedded_transfer_check_json();
    return text.empty() ? nlohmann::json(nullptr) : nlohmann::json::parse(text);
  }();
  return transfer;
}

namespace {

std::string format(const char* pattern, double value) {
  char text[96];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

std::string attention_line(const nlohmann::json& shape) {
  const nlohmann::json& out = shape.at("held_out");
  const nlohmann::json& in = shape.at("in_sample");
  // "held out / in sample"
  const auto both = [&](const char* pattern, const char* field) {
    return format(pattern, out.at(field).get<double>()) + " / " +
           (in.is_null() ? std::string("-") : format(pattern, in.at(field).get<double>()));
  };
  return "  " + shape.at("shape").get<std::string>() + " (" +
         std::to_string(out.at("variants").get<int>()) + " variants): rank correlation " +
         both("%.2f", "spearman") + ", top-1 regret " + both("%.1f%%", "regret_percent") +
         ", L2 misses off by " + both("%.1f%%", "misses_mape_percent") +
         ", the best within 2% among the top " +
         std::to_string(out.at("top_k_within_2_percent").get<int>()) + "\n";
}

}  // namespace

std::string transfer_accuracy_text(const nlohmann::json& transfer, const std::string& family) {
  if (transfer.is_null()) {
    return "time model not yet checked on a GPU absent from its calibration: its times are "
           "predictions of unknown accuracy\n";
  }
  const std::string judged = transfer.at("judged_gpu").get<std::string>();
  const std::string calibration = transfer.at("calibration_gpu").get<std::string>();
  std::string text = "time model calibrated on " + calibration + " measurements only, checked on " +
                     judged + " (" + transfer.at("judged_on").get<std::string>() +
                     "), held out / in sample (" + calibration + "):\n";
  if (family == "attention") {
    for (const nlohmann::json& shape : transfer.at("attention")) text += attention_line(shape);
    for (const nlohmann::json& tune : transfer.at("model_top")) {
      text += "  --model-top " + std::to_string(tune.at("top_k").get<int>()) + " on " + judged +
              ", " + tune.at("shape").get<std::string>() + ": the best of its " +
              std::to_string(tune.at("measured").get<int>()) + " measured variants " +
              format("%+.2f%%", tune.at("loss_percent").get<double>()) +
              " against the full tune's best (" +
              std::to_string(tune.at("full_tune_variants").get<int>()) +
              " variants; a variant "
              "measured in both differs by " +
              format("%.1f%%", tune.at("median_repeat_difference_percent").get<double>()) +
              " (median))\n";
    }
    return text;
  }
  for (const nlohmann::json& entry : transfer.at("gemm")) {
    const nlohmann::json& out = entry.at("held_out");
    text += "  " + entry.at("shape_and_binary").get<std::string>() + ": predicted best stride " +
            out.at("predicted_best_stride").get<std::string>() + ", measured " +
            out.at("measured_best_stride").get<std::string>() +
            format(", loss %.1f%%", out.at("loss_percent").get<double>()) +
            format(" (the strides span %.1f%%)", out.at("sensitivity_percent").get<double>()) +
            "\n";
  }
  return text;
}

}  // namespace swr::model
