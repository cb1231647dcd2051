#include "model/roofline_estimate.hpp"

#include <algorithm>

namespace swr::model {

RooflineEstimate roofline_estimate(double flops, double dram_bytes, const GpuProfile& gpu) {
  RooflineEstimate estimate;
  estimate.compute_seconds = gpu.peak_tensor_flops > 0 ? flops / gpu.peak_tensor_flops : 0.0;
  estimate.memory_seconds =
      gpu.dram_bytes_per_second > 0 ? dram_bytes / gpu.dram_bytes_per_second : 0.0;
  estimate.seconds = std::max(estimate.compute_seconds, estimate.memory_seconds);
  estimate.bound = estimate.memory_seconds >= estimate.compute_seconds ? "memory" : "compute";
  estimate.tflops = estimate.seconds > 0 ? flops / estimate.seconds / 1e12 : 0.0;
  return estimate;
}

}  // namespace swr::model
