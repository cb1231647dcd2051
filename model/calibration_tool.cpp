// swr-l2-calibration: writes (or checks) bench/results/<sweep>/calibration.json, the L2 model's
// agreement with the measured misses of a sweep (model/calibration_check.hpp). Run from the
// repository root, so that the file names its evidence by its path in the repository:
//   build/swr-l2-calibration bench/results/l2-sweep-h200 --gpu h200 >
//       bench/results/l2-sweep-h200/calibration.json
//   build/swr-l2-calibration bench/results/l2-sweep-h200 --gpu h200 --check   (the CTest)
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/calibration_check.hpp"
#include "swr/gpu_profile.hpp"
#include "swr/usage_error.hpp"

namespace {

constexpr const char* kUsage = "usage: swr-l2-calibration SWEEP_DIR [--gpu NAME] [--check]";

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
      swr::model::read_measured_misses(sweep), swr::model::builtin_profile(gpu), committed);
  return swr::model::print_or_check_figures(computed, committed, check, "swr-l2-calibration");
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
