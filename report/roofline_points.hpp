// The roofline of the GPU with the best variant of every measured shape on it (the roofline
// article in shared/seeds/): x = observed arithmetic intensity (FLOPs over the DRAM bytes the
// counters saw), y = achieved FLOP/s; the algorithmic intensity (compulsory bytes only) beside it
// as the bound the point could move right to. Roofs: the profile's dense tensor peak and HBM
// bandwidth; none for a GPU without a built-in profile.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/gpu_results.hpp"

namespace swr::report {

struct RooflinePoint {
  std::string group;  // "attention D128 causal", "GEMM f16": one colour each
  std::string label;  // the problem, e.g. "B8 H1 S16K D128 f16 causal"
  std::string config_key;
  double observed_intensity = 0;                // FLOP/byte
  std::optional<double> algorithmic_intensity;  // FLOP/byte
  double tflops = 0;
  std::optional<double> roofline_fraction;  // as the tuner stored it
};

struct Roofline {
  std::optional<double> peak_tflops;
  std::optional<double> bandwidth_tb_per_s;
  std::vector<std::string> groups;  // in first-seen order
  std::vector<RooflinePoint> points;
  int best_without_counters = 0;  // best variants with no DRAM counters (not placed)

  std::optional<double> ridge_intensity() const;  // peak / bandwidth, FLOP/byte
};

Roofline roofline_of(const GpuResults& results);

}  // namespace swr::report
