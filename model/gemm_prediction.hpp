// What the model predicts for GEMM variants on a GPU profile, present or not: L2 traffic per block
// swizzle stride (model/gemm_traffic.hpp) and time (model/time_model.hpp), as a ranking, its JSON
// form, and the check of the predicted best stride against a measured sweep.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "model/gemm_traffic.hpp"
#include "model/measured_results.hpp"
#include "model/time_model.hpp"

namespace swr::model {

struct GemmPrediction {
  GemmConfig config;
  std::string config_key;
  bool runnable = true;  // false: the variant does not fit the GPU; `note` says why
  std::string note;
  int ctas_per_sm = 0;
  GemmTraffic traffic;
  TimeEstimate time;  // time.known false: no calibration for the path (DRAM time only)
  double tflops = 0;

  nlohmann::json to_json() const;
};

// Every config, in the order given; `compiled_registers` (empty, or one per config, -1 where
// unknown) set the CTAs per SM. Variants that share a schedule (tile, cluster, swizzle order, CTAs
// resident) are simulated once, on `threads` threads (0: hardware threads). `model` may be null.
std::vector<GemmPrediction> predict_gemm_space(const GemmProblem& problem, const GpuProfile& gpu,
                                               const std::vector<GemmConfig>& configs,
                                               const TimeModel* model, int threads = 0,
                                               const std::vector<int>& compiled_registers = {});

// The ranking `swr-tune model --family gemm` and the GEMM main job without the GPU print: the
// best `rows` variants by predicted time, then per kernel binary the stride it is predicted best
// at, and what the predictions rest on.
std::string format_gemm_prediction_table(const GemmProblem& problem, const GpuProfile& gpu,
                                         const std::vector<GemmPrediction>& predictions,
                                         const std::string& accuracy, std::size_t rows = 20);
nlohmann::json gemm_prediction_json(const GemmProblem& problem, const GpuProfile& gpu,
                                    const std::vector<GemmPrediction>& predictions);

// Per measured shape and kernel binary of the judged GPU (a swizzle sweep: one binary at several
// strides): the stride the model predicts fastest, the measured fastest, and what taking the
// predicted one loses; the same on the calibration GPU's measurements of those shapes.
nlohmann::json gemm_stride_check(const TimeCalibration& calibration,
                                 const GpuProfile& calibration_gpu,
                                 const std::vector<MeasuredGemm>& calibration_measurements,
                                 const std::vector<MeasuredGemm>& judged,
                                 const GpuProfile& judged_gpu);

}  // namespace swr::model
