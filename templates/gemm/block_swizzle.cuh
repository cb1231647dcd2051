// The schedule of a tiled GEMM: which output tile (tile_m, tile_n) the linear tile index names
// (the block swizzle), and which tiles a CTA takes (persistence, device only).
// A pure function of plain ints, compiled by NVRTC for the kernel and by the host compiler for the
// generator and its tests (tests/gemm/gemm_swizzle_test.cpp walks every stride and ragged grid),
// so the order the tests check is the order the kernel runs.
//
// Orders (the `axis` and `group` launch arguments):
//   group == 0            plain row-major: tile_n fastest, as CUDA dispatches a 2-D grid.
//   axis n, group G >= 1  the N tiles are cut into bands of G columns (the last band ragged); a
//                         band is walked row by row, so CTAs that run together share a band of B
//                         (kept in L2 across every row of A) and a row of A. G = stride / BN: the
//                         paper's "swizzle stride" is the band width in elements.
//   axis m, group G >= 1  the same with the roles of M and N exchanged: bands of G rows of tiles,
//                         walked column by column.
#pragma once

#include "common/host_device.cuh"

namespace swr {
namespace gemm {

// The launch argument `axis`.
constexpr int kSwizzleAlongN = 0;
constexpr int kSwizzleAlongM = 1;

struct TileCoord {
  int tile_m;
  int tile_n;
};

// Bands of `group` tiles across `across` tiles, `along` tiles deep: band-major, then `along`,
// then the position inside the band.
SWR_HOST_DEVICE void banded_tile(int linear, int across, int along, int group, int& band_pos,
                                 int& along_pos) {
  const int band_tiles = group * along;  // tiles of a full band
  const int band = linear / band_tiles;
  const int first = band * group;
  const int rest = across - first;
  const int width = rest < group ? rest : group;  // the last band may be narrower
  const int within = linear - band * band_tiles;
  along_pos = within / width;
  band_pos = first + within - (within / width) * width;
}

// `linear` in [0, tiles_m * tiles_n).
SWR_HOST_DEVICE TileCoord tile_at(int linear, int tiles_m, int tiles_n, int axis, int group) {
  TileCoord coord;
  if (group <= 0) {
    coord.tile_m = linear / tiles_n;
    coord.tile_n = linear - coord.tile_m * tiles_n;
  } else if (axis == kSwizzleAlongM) {
    banded_tile(linear, tiles_m, tiles_n, group, coord.tile_m, coord.tile_n);
  } else {
    banded_tile(linear, tiles_n, tiles_m, group, coord.tile_n, coord.tile_m);
  }
  return coord;
}

// A cluster of cluster_m x cluster_n CTAs (the wgmma kernel: 1x1, 2x1, 1x2 or 2x2) walks the
// raster of cluster tiles (tiles_m' = ceil(tiles_m / cluster_m), tiles_n' = ceil(tiles_n /
// cluster_n)); CTA `rank` of the cluster computes output tile (cluster_m * tile_m' + rank %
// cluster_m, cluster_n * tile_n' + rank / cluster_m). Past the last row or column of tiles it
// stores nothing.
SWR_HOST_DEVICE TileCoord cluster_member_tile(TileCoord cluster_tile, int cluster_m, int cluster_n,
                                              int rank) {
  TileCoord coord;
  coord.tile_m = cluster_tile.tile_m * cluster_m + rank % cluster_m;
  coord.tile_n = cluster_tile.tile_n * cluster_n + rank / cluster_m;
  return coord;
}

// Multicast masks over the ranks of that cluster (bit r = CTA r). Cluster row `row` (rank %
// cluster_m) holds the CTAs of one tile_m: they share its A tile, each loading 1 / cluster_n of it.
// Cluster column `column` (rank / cluster_m) holds those of one tile_n: they share its B tile.
SWR_HOST_DEVICE unsigned cluster_row_mask(int cluster_m, int cluster_n, int row) {
  unsigned mask = 0;
  for (int column = 0; column < cluster_n; ++column) mask |= 1u << (row + cluster_m * column);
  return mask;
}
SWR_HOST_DEVICE unsigned cluster_column_mask(int cluster_m, int column) {
  return ((1u << cluster_m) - 1u) << (column * cluster_m);
}

// Persistence: which output tiles a CTA computes (the loop below visits them in swizzled order).
enum class Persistence {
  grid,         // one CTA per output tile; the hardware hands out blockIdx.x in increasing order
  static_loop,  // about one wave of CTAs, each taking every gridDim.x-th tile
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// Calls body(coord) for each output tile of this CTA, in swizzled order.
template <Persistence Persist, class Body>
__device__ __forceinline__ void for_each_output_tile(int tiles_m, int tiles_n, int axis, int group,
                                                     Body&& body) {
  const int total = tiles_m * tiles_n;
  if constexpr (Persist == Persistence::grid) {
    if (static_cast<int>(blockIdx.x) < total)
      body(tile_at(blockIdx.x, tiles_m, tiles_n, axis, group));
  } else {
    for (int linear = blockIdx.x; linear < total; linear += gridDim.x)
      body(tile_at(linear, tiles_m, tiles_n, axis, group));
  }
}
#endif

}  // namespace gemm
}  // namespace swr
