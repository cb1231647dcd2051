// The roofline chart: its points from the measurements, and its gnuplot files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/gnuplot.hpp"
#include "report/gpu_results.hpp"

namespace swr::report {

// The roofline of the GPU with the best variant of every measured shape on it (Williams, Waterman
// and Patterson, "Roofline: An Insightful Visual Performance Model for Multicore Architectures",
// CACM 52(4), 2009): x = observed arithmetic intensity (FLOPs over the DRAM bytes the
// counters saw), y = achieved FLOP/s; the algorithmic intensity (compulsory bytes only) beside it
// as the bound the point could move right to. Roofs: the profile's dense tensor peak and HBM
// bandwidth; none for a GPU without a built-in profile.

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

// The gnuplot files of the roofline (roofline_points.hpp): log-log, the bandwidth diagonal and
// the compute roof with the ridge marked, each best variant as a filled dot at its observed
// intensity and an open circle at its algorithmic one, joined by a dotted line.

ChartFiles write_roofline_chart(const Roofline& roofline, const std::string& gpu_label,
                                const std::filesystem::path& directory);

}  // namespace swr::report
