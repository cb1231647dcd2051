#include "model/time_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "model/calibration_check.hpp"
#include "model/work_makespan.hpp"
#include "model/xz_text.hpp"
#include "swr/instruction_path.hpp"

namespace swr {
// bench/results/model-time-h200/time_calibration.json.xz, embedded by model/CMakeLists.txt.
std::string_view embedded_time_calibration_xz();
}  // namespace swr

namespace swr::model {
namespace {

// Attention points whose measured DRAM time is at most this share of their time may calibrate
// under CalibrationShapes::any_shape.
constexpr double kAnyShapeMemoryShare = 0.1;
constexpr int kWarpsToHideLatency = 8;
// Far more than any two shapes' lengths differ (|log2| of 2^31 over 1 is 31): a nearer head dim
// always wins.
constexpr double kHeadDimWeight = 1000;

double log2_ratio(double a, double b) {
  return std::abs(std::log2(std::max(a, 1.0) / std::max(b, 1.0)));
}

}  // namespace

double overlapped_seconds(double compute, double memory, double overlap) {
  return std::max(compute, memory) + overlap * std::min(compute, memory);
}

double compute_from_measured(double measured, double memory, double overlap) {
  if (measured >= memory * (1 + overlap)) return measured - overlap * memory;  // C >= M
  if (measured > memory && overlap > 0) return (measured - memory) / overlap;  // C < M
  return measured;  // faster than the DRAM time says: memory cannot be told apart
}

double path_rate_per_sm(const GpuProfile& gpu, InstructionPath path, double mma_sync_share) {
  const double rate = gpu.peak_tensor_flops / std::max(gpu.sm_count, 1);
  const bool has_wgmma = supports(gpu, InstructionPath::wgmma);
  return path == InstructionPath::mma_sync && has_wgmma ? rate * mma_sync_share : rate;
}

double latency_hiding(int warps_per_sm) {
  return std::sqrt(
      std::min(1.0, static_cast<double>(std::max(warps_per_sm, 1)) / kWarpsToHideLatency));
}

namespace {

struct Candidate {
  const ParsedStepPoint* parsed;
  double distance;
  double work_scale;  // target step work / the point's (a different tile or head dim)
};

// The rules in order; the first that finds points decides. `match(rule, point)` says whether a
// point qualifies under a rule (0: the variant's compute twins, 1: the same tile and persistence,
// 2: the same tile, 3: the same path and block_m) and with which work scale (<= 0: no). Of the
// points found, those at the nearest calibration shape count; there, the twins timed more than once
// (the stop rule times a slow variant once) when there are any.
template <class Match, class Distance>
std::optional<std::pair<std::string, std::vector<Candidate>>> find_candidates(
    const TimeCalibration& calibration, const std::vector<ParsedStepPoint>& points,
    const std::string& key, Match&& match, Distance&& distance) {
  static const char* const kRules[] = {"twin", "same tile", "same tile", "same path"};
  for (int rule = 0; rule < 4; ++rule) {
    std::vector<Candidate> found;
    for (const ParsedStepPoint& parsed : points) {
      const double scale = match(rule, parsed);
      if (scale > 0) found.push_back({&parsed, distance(parsed), scale});
    }
    if (found.empty()) continue;
    const double nearest =
        std::min_element(found.begin(), found.end(), [](const auto& a, const auto& b) {
          return a.distance < b.distance;
        })->distance;
    std::erase_if(found, [&](const Candidate& c) { return c.distance > nearest + 1e-9; });
    const auto runs = [&](const Candidate& c) {
      return calibration.points[c.parsed->index].timed_runs;
    };
    if (std::any_of(found.begin(), found.end(), [&](const auto& c) { return runs(c) > 1; })) {
      std::erase_if(found, [&](const Candidate& c) { return runs(c) <= 1; });
    }
    std::string name = kRules[rule];
    if (rule == 0 && std::any_of(found.begin(), found.end(), [&](const Candidate& c) {
          return calibration.points[c.parsed->index].config == key;
        })) {
      name = "measured";  // the variant itself is among its twins
    }
    return std::make_pair(name, std::move(found));
  }
  return std::nullopt;
}

TimeEstimate finish(const std::optional<std::pair<std::string, std::vector<Candidate>>>& found,
                    InstructionPath path, double makespan_steps, const GpuProfile& target,
                    int ctas_per_sm, int warps_per_cta, double dram_bytes,
                    const TimeCalibration& calibration, const GpuProfile& calibration_gpu) {
  TimeEstimate estimate;
  estimate.memory_seconds =
      target.dram_bytes_per_second > 0 ? dram_bytes / target.dram_bytes_per_second : 0.0;
  if (found && target.peak_tensor_flops > 0) {
    std::vector<double> sm_steps;
    for (const Candidate& candidate : found->second) {
      sm_steps.push_back(candidate.parsed->sm_step_seconds * candidate.work_scale);
    }
    const double rate_ratio = path_rate_per_sm(calibration_gpu, path, calibration.mma_sync_share) /
                              path_rate_per_sm(target, path, calibration.mma_sync_share);
    const int ctas = std::max(ctas_per_sm, 1);
    const double step = median(sm_steps) * rate_ratio * ctas / latency_hiding(ctas * warps_per_cta);
    estimate.compute_seconds = makespan_steps * step;
    estimate.rule = found->first;
    const StepPoint& shown = calibration.points[found->second.front().parsed->index];
    estimate.calibrated_on = shown.shape + " " + shown.config;
    estimate.known = true;
  } else {
    estimate.rule = "none";
  }
  estimate.seconds =
      overlapped_seconds(estimate.compute_seconds, estimate.memory_seconds, calibration.overlap);
  estimate.bound = estimate.memory_seconds > estimate.compute_seconds ? "memory" : "compute";
  return estimate;
}

}  // namespace

namespace {

std::vector<ParsedStepPoint> parse_points(const TimeCalibration& calibration, const char* family,
                                          CalibrationShapes shapes) {
  std::vector<ParsedStepPoint> parsed;
  for (std::size_t index = 0; index < calibration.points.size(); ++index) {
    const StepPoint& point = calibration.points[index];
    if (point.family != family) continue;
    const bool memory_small = point.memory_seconds <= kAnyShapeMemoryShare * point.measured_seconds;
    if (!(point.fits_l2 || (shapes == CalibrationShapes::any_shape && memory_small))) continue;
    ParsedStepPoint entry;
    entry.index = index;
    const nlohmann::json& problem = calibration.shapes.at(point.shape);
    if (point.family == "attention") {
      entry.attention = AttentionProblem::from_json(problem);
      entry.attention_config = AttentionConfig::from_key(point.config).value();
    } else {
      entry.gemm = GemmProblem::from_json(problem);
      entry.gemm_config = GemmConfig::from_key(point.config).value();
    }
    entry.sm_step_seconds =
        point.step_seconds * latency_hiding(point.warps_per_sm) / std::max(point.ctas_per_sm, 1);
    parsed.push_back(std::move(entry));
  }
  return parsed;
}

const GpuProfile& profile_of(const TimeCalibration& calibration) {
  static const GpuProfile none;
  for (const GpuProfile& gpu : builtin_gpu_profiles()) {
    if (gpu.name == calibration.gpu) return gpu;
  }
  return none;
}

}  // namespace

AttentionConfig compute_twin(AttentionConfig config) {
  config.order = KvOrder::cyclic;
  config.swizzle = TileSwizzle::head_major;
  config.head_group = 1;
  config.kv_cache_hint = KvCacheHint::none;
  return config;
}

bool same_kernel_form(const AttentionConfig& a, const AttentionConfig& b) {
  return a.path == b.path && a.overlap == b.overlap && a.pingpong == b.pingpong &&
         a.p_in_smem == b.p_in_smem &&
         (!a.is_wgmma() || a.consumer_warpgroups() == b.consumer_warpgroups());
}

GemmConfig compute_twin(GemmConfig config) {
  config.swizzle_stride = 0;
  config.swizzle_axis = SwizzleAxis::n;
  return config;
}

TimeModel::TimeModel(TimeCalibration calibration, CalibrationShapes shapes)
    : calibration_(std::move(calibration)),
      shapes_(shapes),
      attention_points_(parse_points(calibration_, "attention", shapes_)),
      gemm_points_(parse_points(calibration_, "gemm", shapes_)) {}

TimeEstimate TimeModel::attention(const AttentionProblem& problem, const AttentionConfig& config,
                                  const GpuProfile& target, int ctas_per_sm,
                                  double dram_bytes) const {
  const AttentionConfig twin = compute_twin(config);
  const std::string key = config.key();
  // Classes of calibration shapes, nearest first: the same head dim and mask; the other mask;
  // another head dim, the nearest calibrated one (|log2| of the ratio; both at a tie), the step
  // scaled by the head dims (a step's MMA work is linear in D).
  std::optional<std::pair<std::string, std::vector<Candidate>>> found;
  int relax = 0;
  for (; relax < 3 && !found; ++relax) {
    const auto match = [&](int rule, const ParsedStepPoint& point) -> double {
      const AttentionProblem& shape = point.attention;
      const AttentionConfig& measured = point.attention_config;
      if (measured.path != config.path) return 0;
      if (relax == 0 && (shape.head_dim != problem.head_dim || shape.causal != problem.causal))
        return 0;
      if (relax == 1 && shape.head_dim != problem.head_dim) return 0;
      const double dims = static_cast<double>(problem.head_dim) / shape.head_dim;
      switch (rule) {
        case 0:
          return compute_twin(measured) == twin ? dims : 0;
        case 1:
        case 2: {
          const bool same_tile = measured.block_m == config.block_m &&
                                 measured.block_n == config.block_n &&
                                 measured.warps == config.warps;
          return same_tile && (rule == 2 || measured.persistence == config.persistence) ? dims : 0;
        }
        default:
          return measured.block_m == config.block_m
                     ? dims * config.block_n / static_cast<double>(measured.block_n)
                     : 0;
      }
    };
    // Nearest: the same length of a tile's K/V walk, then the same number of tiles, then the same
    // stages and dtype (for the rules that admit others).
    const auto distance = [&](const ParsedStepPoint& point) {
      const AttentionProblem& shape = point.attention;
      const double rows = static_cast<double>(problem.batch) * problem.heads * problem.seq_q;
      const double point_rows = static_cast<double>(shape.batch) * shape.heads * shape.seq_q;
      // Under "another head dim" the nearest head dim comes first, whatever the lengths.
      const double head_dims = relax == 2 ? log2_ratio(problem.head_dim, shape.head_dim) : 0.0;
      return kHeadDimWeight * head_dims + log2_ratio(problem.seq_kv, shape.seq_kv) +
             0.5 * log2_ratio(rows, point_rows) +
             0.01 * std::abs(point.attention_config.stages - config.stages) +
             (shape.dtype == problem.dtype ? 0.0 : 0.001);
    };
    found = find_candidates(calibration_, attention_points_, key, match, distance);
  }
  if (found && relax == 3) {
    // Another head dim's step, scaled: the rule says which ("measured D128" at D = 256).
    found->first += " D" + std::to_string(found->second.front().parsed->attention.head_dim);
  }
  const double makespan =
      attention_makespan(problem, config, target.sm_count * std::max(ctas_per_sm, 1))
          .busiest_slot_steps;
  TimeEstimate estimate = finish(found, config.path, makespan, target, ctas_per_sm, config.warps,
                                 dram_bytes, calibration_, profile_of(calibration_));
  estimate.form_calibrated =
      found && std::any_of(found->second.begin(), found->second.end(), [&](const Candidate& c) {
        return same_kernel_form(c.parsed->attention_config, config);
      });
  return estimate;
}

TimeEstimate TimeModel::gemm(const GemmProblem& problem, const GemmConfig& config,
                             const GpuProfile& target, int ctas_per_sm, double dram_bytes) const {
  const GemmConfig binary = compute_twin(config);
  const std::string key = config.key();
  const auto match = [&](int rule, const ParsedStepPoint& point) -> double {
    const GemmConfig& measured = point.gemm_config;
    if (measured.path != config.path) return 0;
    const bool same_tile =
        measured.block_m == config.block_m && measured.block_n == config.block_n &&
        measured.block_k == config.block_k && measured.cluster_m == config.cluster_m &&
        measured.cluster_n == config.cluster_n;
    switch (rule) {
      case 0:
        return compute_twin(measured) == binary ? 1.0 : 0;
      case 1:
      case 2:
        return same_tile && (rule == 2 || measured.persistence == config.persistence) ? 1.0 : 0;
      default:
        return measured.block_m == config.block_m
                   ? static_cast<double>(config.block_n) * config.block_k /
                         (static_cast<double>(measured.block_n) * measured.block_k)
                   : 0;
    }
  };
  const auto distance = [&](const ParsedStepPoint& point) {
    const GemmProblem& shape = point.gemm;
    return log2_ratio(problem.k, shape.k) +
           0.5 * log2_ratio(static_cast<double>(problem.m) * problem.n,
                            static_cast<double>(shape.m) * shape.n) +
           0.01 * std::abs(point.gemm_config.stages - config.stages) +
           (shape.dtype == problem.dtype ? 0.0 : 0.001);
  };
  const auto found = find_candidates(calibration_, gemm_points_, key, match, distance);
  const double makespan =
      gemm_makespan(problem, config, target.sm_count * std::max(ctas_per_sm, 1)).busiest_slot_steps;
  return finish(found, config.path, makespan, target, ctas_per_sm, config.warps(), dram_bytes,
                calibration_, profile_of(calibration_));
}

const std::optional<TimeCalibration>& embedded_time_calibration() {
  static const std::optional<TimeCalibration> calibration = []() -> std::optional<TimeCalibration> {
    const std::string_view compressed = embedded_time_calibration_xz();
    if (compressed.empty()) return std::nullopt;
    return TimeCalibration::from_json(
        nlohmann::json::parse(decompress_xz(compressed, "the embedded time calibration")));
  }();
  return calibration;
}

const TimeModel* embedded_time_model() {
  static const std::optional<TimeModel> model = []() -> std::optional<TimeModel> {
    if (!embedded_time_calibration()) return std::nullopt;
    return TimeModel(*embedded_time_calibration());
  }();
  return model ? &*model : nullptr;
}

}  // namespace swr::model
