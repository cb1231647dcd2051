// Predicted kernel time from the roofline: the slower of doing the FLOPs at the profile's peak
// tensor rate and moving the DRAM bytes at its bandwidth. An upper bound on speed: it ignores
// latency, the softmax's non-tensor work and imperfect overlap, so it ranks variants by their
// DRAM traffic wherever that traffic is the bottleneck (GB10 at long sequences).
#pragma once

#include <string>

#include "swr/gpu_profile.hpp"

namespace swr::model {

struct RooflineEstimate {
  double seconds = 0;          // max(compute_seconds, memory_seconds)
  double compute_seconds = 0;  // 0 when the profile's peak is unknown (0)
  double memory_seconds = 0;
  double tflops = 0;  // flops / seconds / 1e12
  std::string bound;  // "memory" or "compute"
};

RooflineEstimate roofline_estimate(double flops, double dram_bytes, const GpuProfile& gpu);

}  // namespace swr::model
