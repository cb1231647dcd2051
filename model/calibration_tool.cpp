// swr-l2-calibration: writes (or checks) bench/results/<sweep>/calibration.json, the L2 model's
// agreement with the measured misses of a sweep (model/calibration_check.hpp). Run from the
// repository root, so that the file names its evidence by its path in the repository:
//   build/swr-l2-calibration bench/results/l2-sweep-h200 --gpu h200 >
//       bench/results/l2-sweep-h200/calibration.json
//   build/swr-l2-calibration bench/results/l2-sweep-h200 --gpu h200 --check   (the CTest)
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/calibration_check.hpp"
#include "swr/gpu_profile.hpp"
#include "swr/usage_error.hpp"

namespace {

constexpr const char* kUsage = "usage: swr-l2-calibration SWEEP_DIR [--gpu NAME] [--check]";

const swr::GpuProfile& profile_named(const std::string& name) {
  std::string names;
  for (const swr::GpuProfile& gpu : swr::builtin_gpu_profiles()) {
    if (gpu.name == name) return gpu;
    names += (names.empty() ? "" : ", ") + gpu.name;
  }
  throw swr::UsageError("unknown GPU '" + name + "': allowed " + names);
}

int run(int argc, char** argv) {
  std::string sweep;
  std::string gpu = "h200";
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--gpu") == 0 && i + 1 < argc) {
      gpu = argv[++i];
    } else if (std::strcmp(argv[i], "--check") == 0) {
      check = true;
    } else if (sweep.empty() && argv[i][0] != '-') {
      sweep = argv[i];
    } else {
      throw swr::UsageError(std::string("bad argument '") + argv[i] + "': " + kUsage);
    }
  }
  if (sweep.empty()) throw swr::UsageError(kUsage);
  const std::string committed = sweep + "/calibration.json";
  const nlohmann::json computed = swr::model::calibration_check(
      swr::model::read_measured_misses(sweep), profile_named(gpu), committed);
  if (!check) {
    std::cout << computed.dump(2) << '\n';
    return 0;
  }
  std::ifstream file(committed);
  if (!file) throw swr::UsageError("bad --check: no file '" + committed + "'");
  const nlohmann::json expected = nlohmann::json::parse(file, nullptr, false);
  if (expected == computed) {
    std::cout << committed << " matches the figures recomputed from the measurements\n";
    return 0;
  }
  // The first differences, as a JSON patch from the committed file to the recomputed one.
  std::cerr << committed << " differs from the figures recomputed from the measurements "
            << "(regenerate it with swr-l2-calibration):\n"
            << nlohmann::json::diff(expected, computed).dump(2).substr(0, 4000) << '\n';
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const swr::UsageError& error) {
    std::cerr << "swr-l2-calibration: " << error.what() << '\n';
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "swr-l2-calibration: " << error.what() << '\n';
    return 1;
  }
}
