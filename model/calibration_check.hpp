// How well the L2 model's misses match the hardware counters, computed from the measurements kept
// in bench/results (`swr-tune show --json` of a sweep, counter
// lts__t_sectors_srcunit_tex_lookup_miss) so that no figure is typed in. The fitted constants of
// the profile (first-touch miss factor, peer-fill miss weight) were fitted on every point of the
// sweep: their figures are in-sample. Held-out figures come from refitting the two constants here,
// by grid search, on the points of one head dimension (the fit set) and predicting the points of
// the other (the held-out set).
//
// The refit is cheap because the constants only weight misses the replay counts; the cache state
// does not depend on them. So each point's misses are exactly linear in them:
//   misses(f, w) = base + (f - 1) * per_first_touch + w * per_peer_fill,
// and three replays per point give every (f, w).
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::model {

// One variant of one shape as the tuner measured it.
struct MeasuredMisses {
  AttentionProblem problem;
  AttentionConfig config;
  int registers = -1;  // ptxas's count for the measured build: it sets the CTAs per SM
  double misses = 0;
  std::string device;       // "NVIDIA H200"
  std::string measured_on;  // "2026-11-22"
};

// Every variant with status ok and L2 misses in <dir>/measured_*.json, files in name order.
// Throws UsageError naming the file when one cannot be read or is not `show --json` output.
std::vector<MeasuredMisses> read_measured_misses(const std::filesystem::path& dir);

// Agreement of predicted with measured misses over a set of points.
struct AgreementFigures {
  int points = 0;
  double misses_mape_percent = 0;  // mean absolute percentage error
  double pooled_spearman = 0;      // rank correlation over all points of the set
  int shapes_ranked = 0;           // shapes whose measured and predicted misses are not all tied
  double min_shape_spearman = 0;   // rank correlation within one shape: the worst shape
  double median_shape_spearman = 0;
  int pairs = 0;          // within-shape pairs whose measured misses differ by at least 5%
  int pairs_ordered = 0;  // of those, the pairs the model puts in the measured order

  nlohmann::json to_json() const;
};

// `predicted[i]` is the model's misses for `points[i]`.
AgreementFigures agreement(const std::vector<MeasuredMisses>& points,
                           const std::vector<double>& predicted);

// The median (0 of none), and a value rounded to `digits` decimals: figures rounded so that the
// committed files and a recomputation compare equal on any compiler.
double median(std::vector<double> values);
double rounded(double value, int digits);

// Spearman's rank correlation (ties share their mean rank); 0 when either side is all ties.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

// The check behind bench/results/<sweep>/calibration.json: the profile's constants on every point
// (in sample), and a refit on head dimension `fit_head_dim` judged on the other points (held out).
// `threads` as predict_space's.
nlohmann::json calibration_check(const std::vector<MeasuredMisses>& points, const GpuProfile& gpu,
                                 const std::string& evidence, int fit_head_dim = 64,
                                 int threads = 0);

// What the tools that write committed figures (swr-l2-calibration, swr-time-model) share: the
// built-in profile of that name (UsageError naming the allowed ones), and printing the computed
// figures, or with `check` comparing them with the committed file: 0 when equal, 1 when not (the
// first differences on stderr, and that `tool` regenerates it).
GpuProfile builtin_profile(const std::string& name);
int print_or_check_figures(const nlohmann::json& computed, const std::string& committed, bool check,
                           const std::string& tool);

}  // namespace swr::model
