// Runs one compiled GEMM variant: loads its cubin into the current context, sizes the grid for
// its persistence mode, turns the swizzle stride into launch arguments, and launches on a stream.
// A wgmma variant also gets its TMA tensor maps (cached per shape and pointers), its zeroed tile
// counter (dynamic persistence) or stream-K scratch, and a grid of whole co-resident clusters.
// The one place that decides a GEMM launch's geometry, for the tuner and for swr::Gemm alike.
#pragma once

#include <memory>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_resources.hpp"
#include "generator/gemm_swizzle.hpp"
#include "runtime/gemm_tensor_maps.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

struct GemmBuffers {
  CUdeviceptr a = 0;  // [m x k], 16-bit elements, row-major
  CUdeviceptr b = 0;  // [k x n]
  CUdeviceptr c = 0;  // [m x n]
};

// What a launch passes to the driver besides the pointers and sizes.
struct GemmLaunchGeometry {
  int grid = 0;  // CTAs (a whole number of clusters)
  int block_threads = 0;
  int dynamic_shared_bytes = 0;  // opted in when the cubin was loaded
  SwizzleLaunch swizzle;         // the kernel's swizzle_axis and swizzle_group arguments
};

class GemmKernelModule {
 public:
  // Loads the cubin into the current context (a DriverError if the device cannot run it).
  GemmKernelModule(const CudaDriver& driver, const std::vector<char>& cubin,
                   const GemmConfig& config, int dynamic_shared_bytes, int sm_count);
  GemmKernelModule(const GemmKernelModule&) = delete;
  GemmKernelModule& operator=(const GemmKernelModule&) = delete;

  int blocks_per_sm() const { return kernel_.blocks_per_sm(); }
  // CTAs resident at once: blocks per SM x SMs, or for clusters the co-resident clusters' CTAs
  // (clusters live inside one GPC, so not every SM can take one).
  int wave_size() const { return wave_size_; }
  int registers_per_thread() const { return kernel_.registers_per_thread(); }
  // One CTA per output tile for `grid`, at most one wave for `static` and `dynamic` (wgmma: at
  // most one wave of whole clusters over the raster's cluster tiles), one wave for `streamk`.
  int grid_size(const GemmProblem& problem) const;

  // What launch() passes for `problem` under `config` (see launch()).
  GemmLaunchGeometry geometry(const GemmProblem& problem, const GemmConfig& config,
                              int persistent_ctas = 0) const;

  // `config` may differ from the loaded one in its swizzle only (one binary serves every stride);
  // `persistent_ctas` > 0 caps the persistent grid (tests use it to give each CTA several tiles).
  // A wgmma launch throws std::invalid_argument, before launching, when TMA cannot describe the
  // operands at these pointers (the line names the operand and the value).
  void launch(const GemmProblem& problem, const GemmBuffers& buffers, CUstream stream,
              const GemmConfig& config, int persistent_ctas = 0) const;
  void launch(const GemmProblem& problem, const GemmBuffers& buffers, CUstream stream) const {
    launch(problem, buffers, stream, config_);
  }

 private:
  int co_resident_cluster_ctas() const;
  void launch_wgmma(const GemmProblem& problem, const GemmBuffers& buffers, CUstream stream,
                    const GemmLaunchGeometry& launch) const;

  const CudaDriver& driver_;
  GemmConfig config_;
  int dynamic_shared_bytes_ = 0;
  int sm_count_ = 0;
  LoadedCubin kernel_;
  int wave_size_ = 0;
  // wgmma: the dynamic scheduler's counter or the stream-K scratch (its flags zeroed on the
  // launch stream before each launch) and the tensor maps of the last launch.
  std::unique_ptr<DeviceAllocation> tile_counter_;
  mutable GemmTensorMapCache tensor_maps_;
};

}  // namespace swr
