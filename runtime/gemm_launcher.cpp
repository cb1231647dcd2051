#include "runtime/gemm_launcher.hpp"

#include <algorithm>
#include <stdexcept>

#include "generator/gemm_kernel_source.hpp"
#include "generator/gemm_space.hpp"

namespace swr {

GemmKernelModule::GemmKernelModule(const CudaDriver& driver, const std::vector<char>& cubin,
                                   const GemmConfig& config, int dynamic_shared_bytes, int sm_count)
    : driver_(driver),
      config_(config),
      dynamic_shared_bytes_(dynamic_shared_bytes),
      sm_count_(sm_count),
      kernel_(driver, cubin, kGemmEntryName, config.threads(), dynamic_shared_bytes, config.key()) {
}

int GemmKernelModule::grid_size(const GemmProblem& problem) const {
  const long long tiles = gemm_tile_grid(problem, config_).tiles();
  if (config_.persistence == GemmPersistence::grid) return static_cast<int>(tiles);
  return static_cast<int>(std::min<long long>(tiles, wave_size()));
}

GemmLaunchGeometry GemmKernelModule::geometry(const GemmProblem& problem, const GemmConfig& config,
                                              int persistent_ctas) const {
  if (with_swizzle(config, 0, SwizzleAxis::n) != with_swizzle(config_, 0, SwizzleAxis::n)) {
    throw std::invalid_argument("GEMM launch: " + config.key() + " is another binary than the " +
                                config_.key() + " loaded");
  }
  GemmLaunchGeometry geometry;
  geometry.grid = grid_size(problem);
  if (persistent_ctas > 0 && config_.persistence != GemmPersistence::grid)
    geometry.grid = std::min(geometry.grid, persistent_ctas);
  geometry.block_threads = config_.threads();
  geometry.dynamic_shared_bytes = dynamic_shared_bytes_;
  // A band wider than the grid is the same order as one exactly as wide: clamp, so that the
  // kernel's group * tiles product cannot overflow for a huge stride.
  geometry.swizzle = swizzle_launch(config);
  const GemmTileGrid tiles = gemm_tile_grid(problem, config_);
  geometry.swizzle.group = std::min(geometry.swizzle.group, std::max(tiles.tiles_m, tiles.tiles_n));
  return geometry;
}

void GemmKernelModule::launch(const GemmProblem& problem, const GemmBuffers& buffers,
                              CUstream stream, const GemmConfig& config,
                              int persistent_ctas) const {
  const GemmLaunchGeometry launch = geometry(problem, config, persistent_ctas);
  const void* a = reinterpret_cast<const void*>(buffers.a);
  const void* b = reinterpret_cast<const void*>(buffers.b);
  void* c = reinterpret_cast<void*>(buffers.c);
  int m = problem.m, n = problem.n, k = problem.k;
  int axis = launch.swizzle.axis, group = launch.swizzle.group;
  // The argument list every rendered kernel takes (generator/gemm_kernel_source.hpp).
  void* arguments[] = {&a, &b, &c, &m, &n, &k, &axis, &group};
  SWR_CU(driver_, cuLaunchKernel(kernel_.function(), launch.grid, 1, 1, launch.block_threads, 1, 1,
                                 launch.dynamic_shared_bytes, stream, arguments, nullptr));
}

}  // namespace swr
