#include "runtime/gemm_launcher.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>
#include <string>

#include "generator/gemm_kernel_source.hpp"
#include "generator/gemm_space.hpp"

namespace swr {

GemmKernelModule::GemmKernelModule(const CudaDriver& driver, const std::vector<char>& cubin,
                                   const GemmConfig& config, int dynamic_shared_bytes, int sm_count)
    : driver_(driver),
      config_(config),
      dynamic_shared_bytes_(dynamic_shared_bytes),
      sm_count_(sm_count),
      kernel_(driver, cubin, gemm_entry_name(config), config.threads(), dynamic_shared_bytes,
              config.key()) {
  wave_size_ = kernel_.blocks_per_sm() * sm_count_;
  if (config_.cluster_size() > 1) wave_size_ = co_resident_cluster_ctas();
  if (config_.persistence == GemmPersistence::dynamic_loop)
    tile_counter_ = std::make_unique<DeviceAllocation>(driver_, sizeof(int));
  // Stream-K: flags and one partial tile per CTA of the largest grid (one wave).
  if (config_.persistence == GemmPersistence::stream_k) {
    tile_counter_ = std::make_unique<DeviceAllocation>(
        driver_, gemm_stream_k_scratch(config_, wave_size_).bytes);
  }
}

int GemmKernelModule::co_resident_cluster_ctas() const {
  CUlaunchConfig launch = {};
  launch.gridDimX = static_cast<unsigned>(sm_count_ - sm_count_ % config_.cluster_size());
  launch.gridDimY = launch.gridDimZ = 1;
  launch.blockDimX = static_cast<unsigned>(config_.threads());
  launch.blockDimY = launch.blockDimZ = 1;
  launch.sharedMemBytes = static_cast<unsigned>(dynamic_shared_bytes_);
  int clusters = 0;
  SWR_CU(driver_, cuOccupancyMaxActiveClusters(&clusters, kernel_.function(), &launch));
  if (clusters < 1) {
    throw DriverError("cuOccupancyMaxActiveClusters", CUDA_ERROR_INVALID_VALUE,
                      config_.key() + ": no cluster of " + std::to_string(config_.cluster_size()) +
                          " CTAs fits on the device");
  }
  return clusters * config_.cluster_size();
}

int GemmKernelModule::grid_size(const GemmProblem& problem) const {
  // A cluster's CTAs share one raster tile: the grid counts whole clusters.
  const long long tiles = gemm_raster_grid(problem, config_).tiles() * config_.cluster_size();
  if (config_.persistence == GemmPersistence::grid) return static_cast<int>(tiles);
  // Stream-K spreads the last partial wave over every unit, also when there is only that wave.
  if (config_.persistence == GemmPersistence::stream_k) return wave_size();
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
  if (persistent_ctas > 0 && config_.persistence != GemmPersistence::grid) {
    geometry.grid = std::min(geometry.grid, persistent_ctas);
    geometry.grid =
        std::max(config_.cluster_size(), geometry.grid - geometry.grid % config_.cluster_size());
  }
  geometry.block_threads = config_.threads();
  geometry.dynamic_shared_bytes = dynamic_shared_bytes_;
  // A band wider than the grid is the same order as one exactly as wide: clamp, so that the
  // kernel's group * tiles product cannot overflow for a huge stride.
  geometry.swizzle = swizzle_launch(config);
  const GemmTileGrid tiles = gemm_raster_grid(problem, config_);
  geometry.swizzle.group = std::min(geometry.swizzle.group, std::max(tiles.tiles_m, tiles.tiles_n));
  return geometry;
}

void GemmKernelModule::launch(const GemmProblem& problem, const GemmBuffers& buffers,
                              CUstream stream, const GemmConfig& config,
                              int persistent_ctas) const {
  const GemmLaunchGeometry launch = geometry(problem, config, persistent_ctas);
  if (config_.path == InstructionPath::wgmma) {
    launch_wgmma(problem, buffers, stream, launch);
    return;
  }
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

void GemmKernelModule::launch_wgmma(const GemmProblem& problem, const GemmBuffers& buffers,
                                    CUstream stream, const GemmLaunchGeometry& launch) const {
  std::array<TensorMap, 3> maps =
      tensor_maps_.maps(driver_, problem, config_, {buffers.a, buffers.b, buffers.c});
  CUdeviceptr counter = tile_counter_ ? tile_counter_->pointer() : 0;
  const GemmStreamKScratch stream_k = gemm_stream_k_scratch(config_, launch.grid);
  const std::size_t zeroed = stream_k.flag_ints > 0 ? stream_k.flag_ints : 1;
  if (tile_counter_) SWR_CU(driver_, cuMemsetD32Async(counter, 0, zeroed, stream));
  void* c = reinterpret_cast<void*>(buffers.c);
  const GemmProblem product = gemm_kernel_problem(problem, config_);  // C^T's m, n if transposed
  int m = product.m, n = product.n, k = product.k;
  int axis = launch.swizzle.axis, group = launch.swizzle.group;
  int* tile_counter = reinterpret_cast<int*>(counter);
  // The wgmma entry's argument list (generator/gemm_kernel_source.hpp); the maps go by value.
  void* arguments[] = {&maps[0].map, &maps[1].map, &maps[2].map, &c,     &m,
                       &n,           &k,           &axis,        &group, &tile_counter};
  // The cluster shape is compiled in (__cluster_dims__): the grid only has to be a multiple of it.
  SWR_CU(driver_, cuLaunchKernel(kernel_.function(), launch.grid, 1, 1, launch.block_threads, 1, 1,
                                 launch.dynamic_shared_bytes, stream, arguments, nullptr));
}

}  // namespace swr
