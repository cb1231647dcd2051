// Which output tiles a CTA computes, in which order: persistence (here) and the block swizzle
// (block_swizzle.cuh). Nothing here knows how a tile is computed (gemm_mainloop.cuh does that).
#pragma once

#include "gemm/block_swizzle.cuh"

namespace swr {
namespace gemm {

enum class Persistence {
  grid,         // one CTA per output tile; the hardware hands out blockIdx.x in increasing order
  static_loop,  // about one wave of CTAs, each taking every gridDim.x-th tile
};

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

}  // namespace gemm
}  // namespace swr
