// swr-time-model: the time model's calibration and its check on another GPU, computed from the
// measurements kept in bench/results (no figure typed in). Run from the repository root, so that
// the files name their evidence by their path in the repository:
//
//   swr-time-model calibrate --gpu h200 CALIBRATION...
//       (| xz -9 > model-time-h200/time_calibration.json.xz)
//   swr-time-model transfer --gpu h200 CALIBRATION... --judge-gpu h100 --judge DIR [--judge DIR]
//       [--model-top-run DIR]   (the judged GPU's --model-top tunes of the judged shapes)
//   (either with --check FILE: recompute and compare with the committed file; the CTests)
//
// CALIBRATION (measured on the calibration GPU only): --attention DIR, --gemm DIR (each as often
// as needed: directories of `swr-tune show --json` dumps), --mma-sync-sweep CSV and --wgmma-sweep
// CSV (`swr-tune --family gemm --sweep` tables: mma_sync's share of the tensor rate).
// `transfer` fits the calibration from those alone, predicts the judged GPU, and uses the --judge
// measurements only to judge the predictions (model/transfer_check.hpp).
#include <algorithm>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/calibration_check.hpp"
#include "model/measured_results.hpp"
#include "model/time_model.hpp"
#include "model/transfer_check.hpp"
#include "swr/gpu_profile.hpp"
#include "swr/usage_error.hpp"

namespace {

constexpr const char* kUsage =
    "usage: swr-time-model calibrate|transfer --gpu NAME [--attention DIR]... [--gemm DIR]... "
    "--mma-sync-sweep CSV --wgmma-sweep CSV [--judge-gpu NAME --judge DIR... [--model-top-run "
    "DIR]] "
    "[--check FILE]";

struct Arguments {
  std::string verb;
  std::string gpu = "h200";
  std::string judge_gpu;
  std::vector<std::string> attention;
  std::vector<std::string> gemm;
  std::vector<std::string> judge;
  std::vector<std::string> model_top;
  std::string mma_sync_sweep;
  std::string wgmma_sweep;
  std::string check;
};

Arguments parse(int argc, char** argv) {
  Arguments arguments;
  if (argc < 2) throw swr::UsageError(kUsage);
  arguments.verb = argv[1];
  if (arguments.verb != "calibrate" && arguments.verb != "transfer") {
    throw swr::UsageError("bad verb '" + arguments.verb + "': allowed calibrate, transfer");
  }
  for (int i = 2; i < argc; ++i) {
    const std::string option = argv[i];
    if (i + 1 >= argc) throw swr::UsageError("option " + option + " needs a value: " + kUsage);
    const std::string value = argv[++i];
    if (value.empty()) throw swr::UsageError("option " + option + " needs a value: " + kUsage);
    if (option == "--gpu") {
      arguments.gpu = value;
    } else if (option == "--judge-gpu") {
      arguments.judge_gpu = value;
    } else if (option == "--attention") {
      arguments.attention.push_back(value);
    } else if (option == "--gemm") {
      arguments.gemm.push_back(value);
    } else if (option == "--judge") {
      arguments.judge.push_back(value);
    } else if (option == "--model-top-run") {
      arguments.model_top.push_back(value);
    } else if (option == "--mma-sync-sweep") {
      arguments.mma_sync_sweep = value;
    } else if (option == "--wgmma-sweep") {
      arguments.wgmma_sweep = value;
    } else if (option == "--check") {
      arguments.check = value;
    } else {
      throw swr::UsageError("bad option '" + option + "': " + kUsage);
    }
  }
  if (arguments.mma_sync_sweep.empty() || arguments.wgmma_sweep.empty()) {
    throw swr::UsageError("missing --mma-sync-sweep or --wgmma-sweep: " + std::string(kUsage));
  }
  if (arguments.verb == "transfer" && (arguments.judge.empty() || arguments.judge_gpu.empty())) {
    throw swr::UsageError("transfer needs --judge-gpu and at least one --judge DIR");
  }
  return arguments;
}

// A directory named for both families (--attention D --gemm D) is one piece of evidence.
void add_evidence(std::vector<std::string>& evidence, const std::string& dir) {
  if (std::find(evidence.begin(), evidence.end(), dir) == evidence.end()) evidence.push_back(dir);
}

swr::model::CalibrationInputs calibration_inputs(const Arguments& arguments) {
  swr::model::CalibrationInputs inputs;
  for (const std::string& dir : arguments.attention) {
    for (auto& variant : swr::model::read_measured_attention(dir)) {
      inputs.attention.push_back(std::move(variant));
    }
    add_evidence(inputs.evidence, dir);
  }
  for (const std::string& dir : arguments.gemm) {
    for (auto& variant : swr::model::read_measured_gemm(dir))
      inputs.gemm.push_back(std::move(variant));
    add_evidence(inputs.evidence, dir);
  }
  inputs.mma_sync_sweep_csv = arguments.mma_sync_sweep;
  inputs.wgmma_sweep_csv = arguments.wgmma_sweep;
  return inputs;
}

int emit(const nlohmann::json& computed, const std::string& check) {
  return swr::model::print_or_check_figures(computed, check, !check.empty(), "swr-time-model");
}

int run(int argc, char** argv) {
  const Arguments arguments = parse(argc, argv);
  const swr::GpuProfile gpu = swr::model::builtin_profile(arguments.gpu);
  const swr::model::CalibrationInputs inputs = calibration_inputs(arguments);
  const swr::model::TimeCalibration calibration = swr::model::fit_time_calibration(inputs, gpu);
  if (arguments.verb == "calibrate") return emit(calibration.to_json(), arguments.check);

  // The judged GPU's measurements are read only now, after the calibration is fixed.
  const swr::GpuProfile judged_gpu = swr::model::builtin_profile(arguments.judge_gpu);
  swr::model::JudgedMeasurements judged;
  for (const std::string& dir : arguments.judge) {
    for (auto& variant : swr::model::read_measured_attention(dir)) {
      judged.attention.push_back(std::move(variant));
    }
    for (auto& variant : swr::model::read_measured_gemm(dir))
      judged.gemm.push_back(std::move(variant));
    add_evidence(judged.evidence, dir);
  }
  for (const std::string& dir : arguments.model_top) {
    for (auto& variant : swr::model::read_measured_attention(dir)) {
      judged.model_top.push_back(std::move(variant));
    }
    add_evidence(judged.evidence, dir);
  }
  return emit(swr::model::transfer_check(calibration, gpu, inputs.attention, inputs.gemm, judged,
                                         judged_gpu),
              arguments.check);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const swr::UsageError& error) {
    std::cerr << "swr-time-model: " << error.what() << '\n';
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "swr-time-model: " << error.what() << '\n';
    return 1;
  }
}
