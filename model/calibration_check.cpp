#include "model/calibration_check.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "model/measured_results.hpp"
#include "model/model_prediction.hpp"
#include "model/xz_text.hpp"
#include "swr/data_type.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

// A measured pair counts for the order check only when the counters tell its members apart.
constexpr double kDistinctPairShare = 0.05;
// The grid the refit searches: the first-touch factor over [1, partitions], the peer-fill weight
// over [0, 1], both in steps of 0.05 (the precision the shipped constants were chosen to).
constexpr double kGridStep = 0.05;

std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return values[a] < values[b]; });
  std::vector<double> result(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) result[order[k]] = (i + j) / 2.0;
    i = j + 1;
  }
  return result;
}

// Each point's misses at first-touch factor 1 and peer-fill weight 0, and what one unit of each
// constant adds (see the header: misses are linear in both).
struct LinearMisses {
  double base = 0;
  double per_first_touch = 0;
  double per_peer_fill = 0;
  double at(double first_touch_factor, double peer_fill_weight) const {
    return base + (first_touch_factor - 1) * per_first_touch + peer_fill_weight * per_peer_fill;
  }
};

std::vector<double> predict_misses(const std::vector<MeasuredMisses>& points, const GpuProfile& gpu,
                                   int threads) {
  std::map<std::string, std::vector<std::size_t>> by_shape;
  for (std::size_t i = 0; i < points.size(); ++i) by_shape[points[i].problem.key()].push_back(i);
  std::vector<double> misses(points.size());
  for (const auto& [shape, members] : by_shape) {
    std::vector<AttentionConfig> configs;
    std::vector<int> registers;
    for (std::size_t i : members) {
      configs.push_back(points[i].config);
      registers.push_back(points[i].registers);
    }
    const std::vector<ModelPrediction> predicted =
        predict_space(points[members.front()].problem, gpu, configs, {}, threads, registers);
    for (std::size_t k = 0; k < members.size(); ++k) {
      if (!predicted[k].runnable) {
        throw std::runtime_error("the model cannot predict measured variant " + shape + " " +
                                 predicted[k].config_key + ": " + predicted[k].note);
      }
      misses[members[k]] = static_cast<double>(predicted[k].misses);
    }
  }
  return misses;
}

std::vector<LinearMisses> linear_misses(const std::vector<MeasuredMisses>& points,
                                        const GpuProfile& gpu, int threads) {
  GpuProfile base = gpu;
  base.l2_first_touch_miss_factor = 1.0;
  base.l2_peer_fill_miss_weight = 0.0;
  GpuProfile first_touch = base;
  first_touch.l2_first_touch_miss_factor = 2.0;
  GpuProfile peer_fill = base;
  peer_fill.l2_peer_fill_miss_weight = 1.0;
  const std::vector<double> at_base = predict_misses(points, base, threads);
  const std::vector<double> at_first_touch = predict_misses(points, first_touch, threads);
  const std::vector<double> at_peer_fill = predict_misses(points, peer_fill, threads);
  std::vector<LinearMisses> result(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    result[i] = {at_base[i], at_first_touch[i] - at_base[i], at_peer_fill[i] - at_base[i]};
  }
  return result;
}

std::vector<double> misses_at(const std::vector<LinearMisses>& linear, double first_touch_factor,
                              double peer_fill_weight) {
  std::vector<double> misses;
  for (const LinearMisses& point : linear) {
    misses.push_back(point.at(first_touch_factor, peer_fill_weight));
  }
  return misses;
}

template <class T>
std::vector<T> subset(const std::vector<T>& values, const std::vector<bool>& keep, bool wanted) {
  std::vector<T> result;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (keep[i] == wanted) result.push_back(values[i]);
  }
  return result;
}

}  // namespace

std::vector<MeasuredMisses> read_measured_misses(const std::filesystem::path& dir) {
  std::vector<MeasuredMisses> points;
  for (const MeasuredAttention& measured : read_measured_attention(dir)) {
    if (!measured.misses) continue;
    points.push_back({measured.problem, measured.config, measured.registers, *measured.misses,
                      measured.device, measured.measured_on});
  }
  return points;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = ranks(a);
  const std::vector<double> rb = ranks(b);
  const double n = static_cast<double>(ra.size());
  double mean_a = 0;
  double mean_b = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    mean_a += ra[i] / n;
    mean_b += rb[i] / n;
  }
  double covariance = 0;
  double variance_a = 0;
  double variance_b = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    covariance += (ra[i] - mean_a) * (rb[i] - mean_b);
    variance_a += (ra[i] - mean_a) * (ra[i] - mean_a);
    variance_b += (rb[i] - mean_b) * (rb[i] - mean_b);
  }
  if (variance_a == 0 || variance_b == 0) return 0;
  return covariance / std::sqrt(variance_a * variance_b);
}

AgreementFigures agreement(const std::vector<MeasuredMisses>& points,
                           const std::vector<double>& predicted) {
  AgreementFigures figures;
  figures.points = static_cast<int>(points.size());
  std::vector<double> measured;
  double error_sum = 0;
  std::map<std::string, std::vector<std::size_t>> by_shape;
  for (std::size_t i = 0; i < points.size(); ++i) {
    measured.push_back(points[i].misses);
    error_sum += std::abs(predicted[i] - points[i].misses) / points[i].misses;
    by_shape[points[i].problem.key()].push_back(i);
  }
  if (points.empty()) return figures;
  figures.misses_mape_percent = 100.0 * error_sum / static_cast<double>(points.size());
  figures.pooled_spearman = spearman(measured, predicted);
  std::vector<double> shape_correlations;
  for (const auto& [shape, members] : by_shape) {
    std::vector<double> shape_measured;
    std::vector<double> shape_predicted;
    for (std::size_t i : members) {
      shape_measured.push_back(measured[i]);
      shape_predicted.push_back(predicted[i]);
    }
    const bool all_tied = std::adjacent_find(shape_predicted.begin(), shape_predicted.end(),
                                             std::not_equal_to<>()) == shape_predicted.end() ||
                          std::adjacent_find(shape_measured.begin(), shape_measured.end(),
                                             std::not_equal_to<>()) == shape_measured.end();
    if (!all_tied) shape_correlations.push_back(spearman(shape_measured, shape_predicted));
    for (std::size_t a = 0; a < members.size(); ++a) {
      for (std::size_t b = a + 1; b < members.size(); ++b) {
        const double ma = shape_measured[a];
        const double mb = shape_measured[b];
        if (std::abs(ma - mb) < kDistinctPairShare * std::max(ma, mb)) continue;
        ++figures.pairs;
        const double pa = shape_predicted[a];
        const double pb = shape_predicted[b];
        if ((ma < mb && pa < pb) || (ma > mb && pa > pb)) ++figures.pairs_ordered;
      }
    }
  }
  figures.shapes_ranked = static_cast<int>(shape_correlations.size());
  if (!shape_correlations.empty()) {
    figures.min_shape_spearman =
        *std::min_element(shape_correlations.begin(), shape_correlations.end());
    figures.median_shape_spearman = median(shape_correlations);
  }
  return figures;
}

nlohmann::json AgreementFigures::to_json() const {
  return {{"points", points},
          {"misses_mape_percent", rounded(misses_mape_percent, 2)},
          {"pooled_spearman", rounded(pooled_spearman, 4)},
          {"shapes_ranked", shapes_ranked},
          {"min_shape_spearman", rounded(min_shape_spearman, 4)},
          {"median_shape_spearman", rounded(median_shape_spearman, 4)},
          {"pairs", pairs},
          {"pairs_ordered", pairs_ordered}};
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

double rounded(double value, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

GpuProfile builtin_profile(const std::string& name) {
  std::string names;
  for (const GpuProfile& gpu : builtin_gpu_profiles()) {
    if (gpu.name == name) return gpu;
    names += (names.empty() ? "" : ", ") + gpu.name;
  }
  throw UsageError("unknown GPU '" + name + "': allowed " + names);
}

int print_or_check_figures(const nlohmann::json& computed, const std::string& committed, bool check,
                           const std::string& tool) {
  if (!check) {
    std::cout << computed.dump(2) << '\n';
    return 0;
  }
  if (!std::filesystem::is_regular_file(committed)) {
    throw UsageError("bad --check: no file '" + committed + "'");
  }
  const nlohmann::json expected = nlohmann::json::parse(read_maybe_xz(committed), nullptr, false);
  if (expected == computed) {
    std::cout << committed << " matches the figures recomputed from the measurements\n";
    return 0;
  }
  // The first differences, as a JSON patch from the committed file to the recomputed one.
  std::cerr << committed << " differs from the figures recomputed from the measurements "
            << "(regenerate it with " << tool << "):\n"
            << nlohmann::json::diff(expected, computed).dump(2).substr(0, 4000) << '\n';
  return 1;
}

nlohmann::json calibration_check(const std::vector<MeasuredMisses>& points, const GpuProfile& gpu,
                                 const std::string& evidence, int fit_head_dim, int threads) {
  const std::vector<LinearMisses> linear = linear_misses(points, gpu, threads);
  const std::vector<double> shipped =
      misses_at(linear, gpu.l2_first_touch_miss_factor, gpu.l2_peer_fill_miss_weight);

  std::vector<bool> in_fit_set;
  for (const MeasuredMisses& point : points) {
    in_fit_set.push_back(point.problem.head_dim == fit_head_dim);
  }
  const std::vector<MeasuredMisses> fit_points = subset(points, in_fit_set, true);
  const std::vector<MeasuredMisses> held_out_points = subset(points, in_fit_set, false);
  const std::vector<LinearMisses> fit_linear = subset(linear, in_fit_set, true);
  if (fit_points.empty() || held_out_points.empty()) {
    throw UsageError("bad fit set: head dimension " + std::to_string(fit_head_dim) +
                     " must hold some of the measured points, not all");
  }
  // Grid search for the lowest misses error on the fit set (steps counted in integers, so the
  // grid is the same on every machine).
  double best_first_touch = 1.0;
  double best_peer_fill = 0.0;
  double best_error = -1;
  const int first_touch_steps = static_cast<int>(std::lround((gpu.l2_partitions - 1) / kGridStep));
  const int peer_fill_steps = static_cast<int>(std::lround(1.0 / kGridStep));
  for (int f = 0; f <= first_touch_steps; ++f) {
    for (int w = 0; w <= peer_fill_steps; ++w) {
      const double first_touch = 1.0 + f * kGridStep;
      const double peer_fill = w * kGridStep;
      const double error =
          agreement(fit_points, misses_at(fit_linear, first_touch, peer_fill)).misses_mape_percent;
      if (best_error < 0 || error < best_error) {
        best_error = error;
        best_first_touch = first_touch;
        best_peer_fill = peer_fill;
      }
    }
  }
  const std::vector<double> refit = misses_at(linear, best_first_touch, best_peer_fill);

  nlohmann::json table = nlohmann::json::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    table.push_back({{"shape", points[i].problem.key()},
                     {"variant", points[i].config.key()},
                     {"measured", points[i].misses},
                     {"predicted", std::llround(shipped[i])},
                     {"predicted_refit", std::llround(refit[i])},
                     {"held_out", !in_fit_set[i]}});
  }
  const std::string fit_set = "head_dim " + std::to_string(fit_head_dim);
  return {{"gpu", gpu.name},
          {"checked_on", points.front().device + ", " + points.front().measured_on},
          {"evidence", evidence},
          {"counter", "lts__t_sectors_srcunit_tex_lookup_miss.sum"},
          {"in_sample",
           {{"about", "the profile's constants on every point; they were fitted on all of them"},
            {"first_touch_miss_factor", gpu.l2_first_touch_miss_factor},
            {"peer_fill_miss_weight", gpu.l2_peer_fill_miss_weight},
            {"figures", agreement(points, shipped).to_json()}}},
          {"held_out",
           {{"about", "the constants refitted by grid search on " + fit_set +
                          " (lowest misses error), judged on the other points"},
            {"fit_set", fit_set},
            {"first_touch_miss_factor", rounded(best_first_touch, 2)},
            {"peer_fill_miss_weight", rounded(best_peer_fill, 2)},
            {"fit_figures", agreement(fit_points, subset(refit, in_fit_set, true)).to_json()},
            {"figures", agreement(held_out_points, subset(refit, in_fit_set, false)).to_json()}}},
          {"points", table}};
}

}  // namespace swr::model
