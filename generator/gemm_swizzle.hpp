// The GEMM schedule on the host: the block swizzle (the kernel's launch arguments for a config's
// swizzle stride, and the tile order they produce) and the scratch of stream-K's fixup. The
// schedule itself is templates/gemm/block_swizzle.cuh and stream_k.cuh, compiled here by the host
// compiler: the host and the kernel share one definition.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

// The strides of the paper's sweep (elements of the swizzled axis; 0 = plain row-major). The paper
// says "11 values from 0 to 8192, including 1792" and names 512, 1536, 2048, 3072, 4096, 6144 and
// 8192 as optima; 256 and 1024 complete the eleven (our choice: the paper does not list them).
inline constexpr int kPaperSwizzleStrides[] = {0,    256,  512,  1024, 1536, 1792,
                                               2048, 3072, 4096, 6144, 8192};

struct GemmTileGrid {
  int tiles_m = 0;
  int tiles_n = 0;
  long long tiles() const { return static_cast<long long>(tiles_m) * tiles_n; }
};

// The product the kernel computes: the problem itself, or for a transposed config C^T = B^T · A^T,
// whose m and n are the problem's n and m. Tiles, clusters and the raster are the kernel's.
GemmProblem gemm_kernel_problem(const GemmProblem& problem, const GemmConfig& config);

// Tiles of the kernel's product (gemm_kernel_problem).
GemmTileGrid gemm_tile_grid(const GemmProblem& problem, const GemmConfig& config);

// The grid the kernel's raster walks: output tiles, or for a cluster of cluster_m x cluster_n CTAs
// the cluster tiles (tiles_m' = ceil(tiles_m / cluster_m), tiles_n' = ceil(tiles_n / cluster_n));
// each cluster tile's CTA r computes gemm_cluster_member_tile(), and a CTA past the last row or
// column of tiles stores nothing.
GemmTileGrid gemm_raster_grid(const GemmProblem& problem, const GemmConfig& config);

// The kernel's swizzle_axis and swizzle_group arguments.
struct SwizzleLaunch {
  int axis = 0;   // block_swizzle.cuh's kSwizzleAlongN or kSwizzleAlongM
  int group = 0;  // tiles per band; 0 = plain row-major
};

// group = stride / (block_n x cluster_n for axis n, block_m x cluster_m for axis m), at least 1
// when the stride is not 0: bands of raster tiles.
SwizzleLaunch swizzle_launch(const GemmConfig& config);

// (tile_m, tile_n) of linear tile index `linear`, exactly as the kernel computes it.
struct HostTileCoord {
  int tile_m = 0;
  int tile_n = 0;
  bool operator==(const HostTileCoord&) const = default;
};
HostTileCoord gemm_tile_at(int linear, const GemmTileGrid& grid, const SwizzleLaunch& swizzle);

// The output tile CTA `rank` of a cluster computes at raster tile `cluster_tile`, exactly as the
// kernel computes it (block_swizzle.cuh's cluster_member_tile); may lie past the grid's edge.
HostTileCoord gemm_cluster_member_tile(const HostTileCoord& cluster_tile, const GemmConfig& config,
                                       int rank);

// The whole order, linear index 0 .. tiles-1.
std::vector<HostTileCoord> gemm_tile_order(const GemmTileGrid& grid, const SwizzleLaunch& swizzle);

// A name of the order a config produces on a grid, equal for two configs exactly when their orders
// are: "row-major", "column-major", "n-bands-8" (bands of 8 tile columns), "m-bands-4". Bands as
// wide as the grid, or one tile wide, are the plain orders; a grid one tile high or wide has one.
std::string gemm_tile_order_name(const GemmTileGrid& grid, const SwizzleLaunch& swizzle);

// What the wgmma kernel's stream-K fixup needs (templates/gemm/sm90/gemm_stream_k_sm90.cuh).
struct GemmStreamKScratch {
  int flag_ints = 0;      // zeroed on the launch stream before each launch
  std::size_t bytes = 0;  // flags, then one fp32 partial tile per CTA
};

// For a grid of `ctas` CTAs of a stream-K config (zero for any other persistence).
GemmStreamKScratch gemm_stream_k_scratch(const GemmConfig& config, int ctas);

}  // namespace swr
