// The time model: what a variant takes on a target GPU, from what the variant measured on a GPU we
// have (the calibration GPU, the H200), for both families.
//
//   compute   C = makespan(target) x step time
//     makespan: the busiest CTA slot's main-loop steps (model/work_makespan.hpp) over the target's
//       SMs x CTAs per SM (from the compiled kernel's registers and shared memory for the target)
//     step time: measured per variant on the calibration GPU, where memory does not limit it
//       (attention: the K/V of a head fits the usable L2; GEMM: measured DRAM time <= 20% of the
//       kernel's), then scaled to the target by the instruction path's tensor rate per SM (clock
//       included), by the CTAs sharing an SM, and by latency hiding (resident warps, below)
//   memory    M = the L2 simulator's DRAM bytes on the target / the target's DRAM bandwidth
//   time      t = max(C, M) + overlap x min(C, M); overlap fitted on the calibration GPU from
//               twins (variants that differ only in the order of their reads, so their compute is
//               the same): t_a - t_b = overlap x (M_a - M_b) where compute dominates.
//
// Rate per SM: peak_tensor_flops / sm_count; on sm_90 the mma_sync path reaches only a share of
// it (wgmma is Hopper's full-rate instruction), taken from the project's own GEMM sweeps on the
// calibration GPU; on a GPU without wgmma (gb10) mma.sync is the full-rate instruction.
// Latency hiding: an SM needs about 8 resident warps (2 per scheduler) to keep its tensor pipes
// busy; with fewer, the rate scales as sqrt(warps / 8). An assumption, not measured: no GPU we
// have changes a variant's occupancy.
//
// A variant's step time is the median over its compute twins measured at the calibration shape
// nearest to the target's (twins: the same kernel but for order, swizzle, L2 hint or swizzle
// stride, which change its memory traffic, not its compute; "measured" when the variant itself is
// among them, "twin" when only its twins are). Variants whose compute was never measured take, in
// this order: the same tile on the same path (nearest stages, and the same persistence where that
// was measured); the same path and block_m (the step scaled by block_n). Each prediction names the
// rule and the calibration point. The calibration shapes are searched nearest first: the same head
// dim and mask, then the same head dim, then the nearest calibrated head dim (|log2| of the ratio:
// 32 and 80 take 64, 96 and up take 128), the step scaled by D over the point's D. Grouped K/V
// heads (kv_heads) and a causal shift change no step's work: they enter through the makespan (the
// tiles' K/V steps) and the simulator's DRAM bytes (it keys K/V tiles by K/V head).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/measured_results.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::model {

// Which calibration points may set a variant's step time.
enum class CalibrationShapes {
  fits_l2,    // attention: only shapes whose K/V per head fits the usable L2 (the default)
  any_shape,  // every shape where memory does not limit the variant (an upper bound on accuracy)
};

// One measured variant reduced to its step time on the calibration GPU.
struct StepPoint {
  std::string family;  // "attention" or "gemm"
  std::string shape;   // problem key (TimeCalibration::shapes holds its JSON form)
  std::string config;  // config key
  int ctas_per_sm = 0;
  int warps_per_sm = 0;
  int timed_runs = 0;
  double measured_seconds = 0;
  double memory_seconds = 0;   // measured DRAM bytes / the calibration GPU's bandwidth
  double compute_seconds = 0;  // the time model inverted with the fitted overlap
  double makespan_steps = 0;   // on the calibration GPU's slots
  double step_seconds = 0;     // compute_seconds / makespan_steps: one CTA's step, as measured
  bool fits_l2 = false;        // attention's shape rule (GEMM: always true)
};

struct TimeCalibration {
  std::string gpu;                    // the calibration GPU's profile name
  std::string checked_on;             // device and dates
  std::vector<std::string> evidence;  // measurement directories
  double overlap = 0;                 // fitted
  int overlap_pairs = 0;              // twin pairs it was fitted on
  double mma_sync_share = 0;          // mma_sync's share of the calibration GPU's tensor rate
  std::string mma_sync_share_evidence;
  std::map<std::string, nlohmann::json> shapes;  // problem key -> the problem's JSON form
  std::vector<StepPoint> points;

  nlohmann::json to_json() const;
  static TimeCalibration from_json(const nlohmann::json& json);
};

// What fit_time_calibration needs besides the measurements.
struct CalibrationInputs {
  std::vector<MeasuredAttention> attention;
  std::vector<MeasuredGemm> gemm;
  std::vector<std::string> evidence;
  // GEMM sweep CSVs of the same calibration GPU (swr-tune --sweep): the best mma_sync TFLOP/s
  // over the best wgmma TFLOP/s gives mma_sync_share.
  std::filesystem::path mma_sync_sweep_csv;
  std::filesystem::path wgmma_sweep_csv;
};

// Fits the overlap and the mma_sync share, then reduces every measured variant to its step time.
// Throws UsageError when the measurements are not all of `gpu` or there are none.
TimeCalibration fit_time_calibration(const CalibrationInputs& inputs, const GpuProfile& gpu);

struct TimeEstimate {
  double seconds = 0;
  double compute_seconds = 0;
  double memory_seconds = 0;
  std::string bound;  // "compute" or "memory"
  std::string rule;   // how the step time was found: "measured", "twin", "same tile", "same path",
                      // "none"; " D<n>" added when taken from head dim n (none measured at this D)
  std::string calibrated_on;  // "<shape> <config>" of the calibration point
  bool known = false;         // false: no calibration point of the path at all (time: DRAM only)
  // false: every calibration point the step came from is another kernel form's (same_kernel_form),
  // so the estimate says how fast that form is, not this one.
  bool form_calibrated = true;
};

// A calibration point with its problem and config parsed once (TimeModel's own use).
struct ParsedStepPoint {
  std::size_t index = 0;  // into TimeCalibration::points
  AttentionProblem attention;
  AttentionConfig attention_config;
  GemmProblem gemm;
  GemmConfig gemm_config;
  // The step's time on one SM at the calibration GPU's rate with full latency hiding:
  // step x latency_hiding(warps) / CTAs per SM.
  double sm_step_seconds = 0;
};

class TimeModel {
 public:
  explicit TimeModel(TimeCalibration calibration,
                     CalibrationShapes shapes = CalibrationShapes::fits_l2);

  // `ctas_per_sm` on the target, `dram_bytes` the simulator's prediction on it.
  TimeEstimate attention(const AttentionProblem& problem, const AttentionConfig& config,
                         const GpuProfile& target, int ctas_per_sm, double dram_bytes) const;
  TimeEstimate gemm(const GemmProblem& problem, const GemmConfig& config, const GpuProfile& target,
                    int ctas_per_sm, double dram_bytes) const;

  const TimeCalibration& calibration() const { return calibration_; }

 private:
  TimeCalibration calibration_;
  CalibrationShapes shapes_;
  std::vector<ParsedStepPoint> attention_points_;
  std::vector<ParsedStepPoint> gemm_points_;
};

// The calibration `swr-tune model` and the main job use: bench/results/model-time-h200/
// time_calibration.json.xz, embedded at build time (model/CMakeLists.txt); none when not generated.
const std::optional<TimeCalibration>& embedded_time_calibration();

// A model over embedded_time_calibration(); null when none is embedded.
const TimeModel* embedded_time_model();

// t = max(C, M) + overlap x min(C, M), and its inverse for C (C = t where t < M).
double overlapped_seconds(double compute, double memory, double overlap);
double compute_from_measured(double measured, double memory, double overlap);

// The tensor rate per SM that `path` reaches on `gpu` (clock included), with `mma_sync_share` the
// share mma_sync reaches on a GPU that has wgmma.
double path_rate_per_sm(const GpuProfile& gpu, InstructionPath path, double mma_sync_share);

// The variant with the same compute: attention without its order, swizzle and L2 hint; GEMM
// without its swizzle stride (one kernel binary).
AttentionConfig compute_twin(AttentionConfig config);
GemmConfig compute_twin(GemmConfig config);

// One kernel body up to its tile, pipeline depth and schedule: the same instruction path and, on
// wgmma, the same consumers (as many warpgroups; overlap, ping-pong, P through shared memory).
// The rules above borrow a step time across tiles and depths of a form reasonably; across forms
// they guess.
bool same_kernel_form(const AttentionConfig& a, const AttentionConfig& b);

// sqrt(min(1, warps / 8)): the share of an SM's tensor rate its resident warps keep busy.
double latency_hiding(int warps_per_sm);

}  // namespace swr::model
