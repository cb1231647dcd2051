// How well the time model, calibrated on one GPU, predicts another: per measured shape of the
// judged GPU, the rank correlation of predicted and measured time, the top-1 regret, the misses
// error and how many of the model's best variants a tune must measure to come within 2% of the
// best; the same on the calibration GPU's own measurements of those shapes beside them (in
// sample). GEMM: per sweep size, the swizzle stride the model predicts best against the measured
// best. The judged measurements are used only here, to judge: the calibration comes in fixed.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "model/measured_results.hpp"
#include "model/time_model.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::model {

struct JudgedMeasurements {
  std::vector<MeasuredAttention> attention;
  std::vector<MeasuredGemm> gemm;
  std::vector<std::string> evidence;
  // The same GPU's `--model-top K` tunes of the judged shapes (their own databases), if any.
  std::vector<MeasuredAttention> model_top;
};

// How predicted times rank measured ones: rank correlation, the top-1 regret (measured time of
// the predicted best over the measured best, minus 1) and the smallest K whose K best predicted
// variants hold one measured within 2% of the best (what --model-top K needs).
struct RankingFigures {
  double spearman = 0;
  double regret = 0;
  std::size_t predicted_best = 0;  // index
  std::size_t measured_best = 0;
  int top_k_within_2_percent = 0;
};
RankingFigures ranking_figures(const std::vector<double>& predicted,
                               const std::vector<double>& measured);

// Figures of one shape on one GPU.
struct ShapeFigures {
  std::string shape;
  int variants = 0;
  double spearman = 0;         // predicted vs measured time
  double regret = 0;           // measured time of the predicted best / measured best - 1
  std::string predicted_best;  // config key
  std::string measured_best;
  double misses_mape_percent = 0;  // over the variants with counted misses
  int misses_points = 0;
  // The same per persistence rule ("grid", "static", "dynamic"): where the misses error lies.
  std::map<std::string, double> misses_mape_by_persistence_percent;
  int top_k_within_2_percent = 0;  // the smallest K whose measured best is within 2% of the best
  // Spearman and regret when the same shape measured on the calibration GPU may calibrate too
  // (CalibrationShapes::any_shape): what the shape transfer costs beside the GPU transfer.
  double spearman_same_shape = 0;
  double regret_same_shape = 0;

  nlohmann::json to_json() const;
};

// The attention figures of `measured` (all of one GPU, `gpu`), shape by shape.
std::vector<ShapeFigures> attention_figures(const TimeCalibration& calibration,
                                            const std::vector<MeasuredAttention>& measured,
                                            const GpuProfile& gpu);

// The whole check, as committed in bench/results/model-transfer-h200-h100/transfer.json:
// `calibration` (fitted on `calibration_gpu` only), `calibration_measurements` (that GPU's own
// measurements, for the in-sample figures of the judged shapes), the judged GPU's measurements.
nlohmann::json transfer_check(const TimeCalibration& calibration, const GpuProfile& calibration_gpu,
                              const std::vector<MeasuredAttention>& calibration_measurements,
                              const std::vector<MeasuredGemm>& calibration_gemm,
                              const JudgedMeasurements& judged, const GpuProfile& judged_gpu);

// bench/results/model-transfer-h200-h100/transfer.json as embedded at build time; null when the
// check has not been made.
const nlohmann::json& embedded_transfer_check();

// What the time model has been shown to be worth on a GPU absent from its calibration, from a
// transfer check (null: never checked), for `family` "attention" or "gemm": a few lines that say
// the held-out figures beside the in-sample ones, shape by shape (attention: then what each
// --model-top tune of the judged GPU found against its full tune).
std::string transfer_accuracy_text(const nlohmann::json& transfer, const std::string& family);

}  // namespace swr::model
