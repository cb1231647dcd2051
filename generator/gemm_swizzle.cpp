#include "generator/gemm_swizzle.hpp"

#include <algorithm>

#include "templates/gemm/block_swizzle.cuh"

namespace swr {

GemmProblem gemm_kernel_problem(const GemmProblem& problem, const GemmConfig& config) {
  if (!config.transposed) return problem;
  GemmProblem transposed = problem;
  transposed.m = problem.n;
  transposed.n = problem.m;
  return transposed;
}

GemmTileGrid gemm_tile_grid(const GemmProblem& problem, const GemmConfig& config) {
  const GemmProblem product = gemm_kernel_problem(problem, config);
  GemmTileGrid grid;
  grid.tiles_m = (product.m + config.block_m - 1) / config.block_m;
  grid.tiles_n = (product.n + config.block_n - 1) / config.block_n;
  return grid;
}

GemmTileGrid gemm_raster_grid(const GemmProblem& problem, const GemmConfig& config) {
  GemmTileGrid grid = gemm_tile_grid(problem, config);
  grid.tiles_m = (grid.tiles_m + config.cluster_m - 1) / config.cluster_m;
  grid.tiles_n = (grid.tiles_n + config.cluster_n - 1) / config.cluster_n;
  return grid;
}

SwizzleLaunch swizzle_launch(const GemmConfig& config) {
  SwizzleLaunch launch;
  if (config.swizzle_stride <= 0) return launch;
  const bool along_m = config.swizzle_axis == SwizzleAxis::m;
  launch.axis = along_m ? gemm::kSwizzleAlongM : gemm::kSwizzleAlongN;
  const int extent =
      along_m ? config.block_m * config.cluster_m : config.block_n * config.cluster_n;
  launch.group = std::max(1, config.swizzle_stride / extent);
  return launch;
}

HostTileCoord gemm_tile_at(int linear, const GemmTileGrid& grid, const SwizzleLaunch& swizzle) {
  const gemm::TileCoord coord =
      gemm::tile_at(linear, grid.tiles_m, grid.tiles_n, swizzle.axis, swizzle.group);
  return {coord.tile_m, coord.tile_n};
}

HostTileCoord gemm_cluster_member_tile(const HostTileCoord& cluster_tile, const GemmConfig& config,
                                       int rank) {
  const gemm::TileCoord coord = gemm::cluster_member_tile(
      {cluster_tile.tile_m, cluster_tile.tile_n}, config.cluster_m, config.cluster_n, rank);
  return {coord.tile_m, coord.tile_n};
}

std::vector<HostTileCoord> gemm_tile_order(const GemmTileGrid& grid, const SwizzleLaunch& swizzle) {
  std::vector<HostTileCoord> order;
  order.reserve(static_cast<std::size_t>(grid.tiles()));
  for (long long linear = 0; linear < grid.tiles(); ++linear)
    order.push_back(gemm_tile_at(static_cast<int>(linear), grid, swizzle));
  return order;
}

std::string gemm_tile_order_name(const GemmTileGrid& grid, const SwizzleLaunch& swizzle) {
  if (swizzle.group <= 0 || grid.tiles_m <= 1 || grid.tiles_n <= 1) return "row-major";
  const bool along_m = swizzle.axis == gemm::kSwizzleAlongM;
  const int across = along_m ? grid.tiles_m : grid.tiles_n;
  const int group = std::min(swizzle.group, across);
  // One band over the whole axis walks the other axis fastest inside it; bands one tile wide walk
  // the swizzled axis one line at a time.
  if (group == across) return along_m ? "column-major" : "row-major";
  if (group == 1) return along_m ? "row-major" : "column-major";
  return std::string(along_m ? "m" : "n") + "-bands-" + std::to_string(group);
}

GemmStreamKScratch gemm_stream_k_scratch(const GemmConfig& config, int ctas) {
  GemmStreamKScratch scratch;
  if (config.persistence != GemmPersistence::stream_k || ctas <= 0) return scratch;
  constexpr int kConsumers = 2;  // consumer warpgroups, each with its own flag
  scratch.flag_ints = (ctas * kConsumers + 3) / 4 * 4;
  scratch.bytes = static_cast<std::size_t>(scratch.flag_ints) * sizeof(int) +
                  static_cast<std::size_t>(ctas) * config.block_m * config.block_n * sizeof(float);
  return scratch;
}

}  // namespace swr
