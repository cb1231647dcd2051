// fit_time_calibration and the calibration's JSON form (model/time_model.hpp).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "generator/resource_model.hpp"
#include "model/model_profile.hpp"
#include "model/time_model.hpp"
#include "model/work_makespan.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

// GEMM variants whose measured DRAM time is at most this share of their time calibrate compute.
constexpr double kGemmMemoryShare = 0.2;
// A twin pair fits the overlap when its DRAM times differ by at least this share of its time (the
// timer's noise is about 1%) and compute dominates both (DRAM time under half the time).
constexpr double kMaterialShare = 0.01;
constexpr int kReliableRuns = 3;

// Rounded so that the committed file and a recomputation compare equal on any compiler.
double rounded(double value, int significant) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double scale =
      std::pow(10.0, significant - 1 - static_cast<int>(std::floor(std::log10(std::abs(value)))));
  return std::round(value * scale) / scale;
}

// The best TFLOP/s of a sweep CSV (size,stride,tile_order,median_ms,tflops,ratio_to_cublas),
// cuBLAS rows (stride -1) left out.
double best_sweep_tflops(const std::filesystem::path& csv) {
  std::ifstream file(csv);
  if (!file) throw UsageError("bad sweep file '" + csv.string() + "': cannot be read");
  std::string line;
  std::getline(file, line);
  double best = 0;
  while (std::getline(file, line)) {
    std::vector<std::string> cells;
    std::stringstream stream(line);
    for (std::string cell; std::getline(stream, cell, ',');) cells.push_back(cell);
    if (cells.size() < 5 || cells[1] == "-1" || cells[4].empty()) continue;
    best = std::max(best, std::stod(cells[4]));
  }
  if (best <= 0) throw UsageError("bad sweep file '" + csv.string() + "': no measured TFLOP/s");
  return best;
}

struct Sample {
  std::string group;  // shape + compute twin
  double seconds = 0;
  double memory = 0;
  bool reliable = false;
};

template <class Measured>
void add_samples(const std::vector<Measured>& measured, const GpuProfile& gpu,
                 std::vector<Sample>& samples) {
  for (const Measured& variant : measured) {
    if (!variant.dram_bytes) continue;
    samples.push_back({variant.problem.key() + " " + compute_twin(variant.config).key(),
                       variant.seconds, *variant.dram_bytes / gpu.dram_bytes_per_second,
                       variant.timed_runs >= kReliableRuns});
  }
}

// Least squares through the origin of time differences on DRAM-time differences of twins.
std::pair<double, int> fit_overlap(const std::vector<Sample>& samples) {
  std::map<std::string, std::vector<const Sample*>> groups;
  for (const Sample& sample : samples) {
    if (sample.reliable) groups[sample.group].push_back(&sample);
  }
  double products = 0;
  double squares = 0;
  int pairs = 0;
  for (const auto& [group, members] : groups) {
    for (std::size_t a = 0; a < members.size(); ++a) {
      for (std::size_t b = a + 1; b < members.size(); ++b) {
        const Sample& x = *members[a];
        const Sample& y = *members[b];
        const double shorter = std::min(x.seconds, y.seconds);
        const double memory_gap = x.memory - y.memory;
        if (std::abs(memory_gap) < kMaterialShare * shorter) continue;
        if (x.memory > x.seconds / 2 || y.memory > y.seconds / 2) continue;
        products += (x.seconds - y.seconds) * memory_gap;
        squares += memory_gap * memory_gap;
        ++pairs;
      }
    }
  }
  if (pairs == 0) return {1.0, 0};  // nothing to fit: no overlap assumed
  return {std::clamp(products / squares, 0.0, 1.0), pairs};
}

int measured_ctas_per_sm(const MeasuredAttention& variant, const GpuProfile& gpu) {
  if (variant.ctas_per_sm > 0) return variant.ctas_per_sm;
  return variant.registers > 0
             ? attention_resource_use(variant.problem, variant.config, gpu, variant.registers)
                   .blocks_per_sm
             : attention_resource_use(variant.problem, variant.config, gpu).blocks_per_sm;
}

int measured_ctas_per_sm(const MeasuredGemm& variant, const GpuProfile& gpu) {
  if (variant.ctas_per_sm > 0) return variant.ctas_per_sm;
  return gemm_resource_use(variant.config, gpu, variant.registers).blocks_per_sm;
}

StepPoint step_point(const MeasuredAttention& variant, const GpuProfile& gpu) {
  StepPoint point;
  point.family = "attention";
  point.ctas_per_sm = std::max(1, measured_ctas_per_sm(variant, gpu));
  point.warps_per_sm = point.ctas_per_sm * variant.config.warps;
  point.makespan_steps =
      attention_makespan(variant.problem, variant.config, gpu.sm_count * point.ctas_per_sm)
          .busiest_slot_steps;
  point.fits_l2 = variant.problem.kv_bytes_per_head() <= static_cast<double>(usable_l2_bytes(gpu));
  return point;
}

StepPoint step_point(const MeasuredGemm& variant, const GpuProfile& gpu) {
  StepPoint point;
  point.family = "gemm";
  point.ctas_per_sm = std::max(1, measured_ctas_per_sm(variant, gpu));
  point.warps_per_sm = point.ctas_per_sm * variant.config.warps();
  point.makespan_steps =
      gemm_makespan(variant.problem, variant.config, gpu.sm_count * point.ctas_per_sm)
          .busiest_slot_steps;
  point.fits_l2 = true;
  return point;
}

template <class Measured>
void add_points(const std::vector<Measured>& measured, const GpuProfile& gpu, double overlap,
                TimeCalibration& calibration) {
  std::vector<StepPoint>& points = calibration.points;
  for (const Measured& variant : measured) {
    calibration.shapes[variant.problem.key()] = variant.problem.to_json();
    StepPoint point = step_point(variant, gpu);
    point.shape = variant.problem.key();
    point.config = variant.config.key();
    point.timed_runs = variant.timed_runs;
    point.measured_seconds = variant.seconds;
    point.memory_seconds = variant.dram_bytes.value_or(0) / gpu.dram_bytes_per_second;
    if (point.family == "gemm") {
      point.fits_l2 = point.memory_seconds <= kGemmMemoryShare * point.measured_seconds;
    }
    point.compute_seconds =
        compute_from_measured(point.measured_seconds, point.memory_seconds, overlap);
    point.step_seconds = point.compute_seconds / std::max(point.makespan_steps, 1.0);
    points.push_back(std::move(point));
  }
}

template <class Measured>
void check_gpu(const std::vector<Measured>& measured, const GpuProfile& gpu,
               std::string& checked_on) {
  for (const Measured& variant : measured) {
    if (variant.gpu != gpu.name) {
      throw UsageError("bad measurement: " + variant.problem.key() + " " + variant.config.key() +
                       " was measured on '" + variant.gpu + "', not the calibration GPU '" +
                       gpu.name + "'");
    }
    if (checked_on.empty()) checked_on = variant.device;
    if (checked_on.find(variant.measured_on) == std::string::npos) {
      checked_on += ", " + variant.measured_on;
    }
  }
}

}  // namespace

TimeCalibration fit_time_calibration(const CalibrationInputs& inputs, const GpuProfile& gpu) {
  validate_model_profile(gpu);
  if (inputs.attention.empty() && inputs.gemm.empty()) {
    throw UsageError("no measured variant to calibrate the time model on");
  }
  TimeCalibration calibration;
  calibration.gpu = gpu.name;
  calibration.evidence = inputs.evidence;
  check_gpu(inputs.attention, gpu, calibration.checked_on);
  check_gpu(inputs.gemm, gpu, calibration.checked_on);

  calibration.mma_sync_share =
      best_sweep_tflops(inputs.mma_sync_sweep_csv) / best_sweep_tflops(inputs.wgmma_sweep_csv);
  calibration.mma_sync_share_evidence = "best TFLOP/s of " + inputs.mma_sync_sweep_csv.string() +
                                        " over that of " + inputs.wgmma_sweep_csv.string();

  std::vector<Sample> samples;
  add_samples(inputs.attention, gpu, samples);
  add_samples(inputs.gemm, gpu, samples);
  std::tie(calibration.overlap, calibration.overlap_pairs) = fit_overlap(samples);

  add_points(inputs.attention, gpu, calibration.overlap, calibration);
  add_points(inputs.gemm, gpu, calibration.overlap, calibration);
  // Through the JSON form, so that a fit in process and the committed file agree to the digit.
  return TimeCalibration::from_json(calibration.to_json());
}

nlohmann::json TimeCalibration::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const StepPoint& point : points) {
    list.push_back({{"family", point.family},
                    {"shape", point.shape},
                    {"config", point.config},
                    {"ctas_per_sm", point.ctas_per_sm},
                    {"warps_per_sm", point.warps_per_sm},
                    {"timed_runs", point.timed_runs},
                    {"measured_ms", rounded(point.measured_seconds * 1e3, 7)},
                    {"memory_ms", rounded(point.memory_seconds * 1e3, 7)},
                    {"compute_ms", rounded(point.compute_seconds * 1e3, 7)},
                    {"makespan_steps", point.makespan_steps},
                    {"step_us", rounded(point.step_seconds * 1e6, 7)},
                    {"fits_l2", point.fits_l2}});
  }
  return {{"gpu", gpu},
          {"checked_on", checked_on},
          {"evidence", evidence},
          {"overlap",
           {{"value", rounded(overlap, 4)},
            {"twin_pairs", overlap_pairs},
            {"about",
             "t = max(C, M) + overlap x min(C, M); fitted by least squares on twins' time "
             "differences against their measured DRAM-time differences"}}},
          {"mma_sync_share",
           {{"value", rounded(mma_sync_share, 4)}, {"evidence", mma_sync_share_evidence}}},
          {"shapes", shapes},
          {"points", list}};
}

TimeCalibration TimeCalibration::from_json(const nlohmann::json& json) {
  TimeCalibration calibration;
  calibration.gpu = json.at("gpu").get<std::string>();
  calibration.checked_on = json.at("checked_on").get<std::string>();
  calibration.evidence = json.at("evidence").get<std::vector<std::string>>();
  calibration.overlap = json.at("overlap").at("value").get<double>();
  calibration.overlap_pairs = json.at("overlap").at("twin_pairs").get<int>();
  calibration.mma_sync_share = json.at("mma_sync_share").at("value").get<double>();
  calibration.mma_sync_share_evidence = json.at("mma_sync_share").at("evidence").get<std::string>();
  calibration.shapes = json.at("shapes").get<std::map<std::string, nlohmann::json>>();
  for (const nlohmann::json& entry : json.at("points")) {
    StepPoint point;
    point.family = entry.at("family").get<std::string>();
    point.shape = entry.at("shape").get<std::string>();
    point.config = entry.at("config").get<std::string>();
    point.ctas_per_sm = entry.at("ctas_per_sm").get<int>();
    point.warps_per_sm = entry.at("warps_per_sm").get<int>();
    point.timed_runs = entry.at("timed_runs").get<int>();
    point.measured_seconds = entry.at("measured_ms").get<double>() / 1e3;
    point.memory_seconds = entry.at("memory_ms").get<double>() / 1e3;
    point.compute_seconds = entry.at("compute_ms").get<double>() / 1e3;
    point.makespan_steps = entry.at("makespan_steps").get<double>();
    point.step_seconds = entry.at("step_us").get<double>() / 1e6;
    point.fits_l2 = entry.at("fits_l2").get<bool>();
    calibration.points.push_back(std::move(point));
  }
  return calibration;
}

}  // namespace swr::model
