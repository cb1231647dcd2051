// Which K/V tile a CTA reads at each step of one Q tile: the Sawtooth Wavefront Reordering idea.
//
// CTAs that run together walk the same K/V tiles. In cyclic order every Q tile starts again at
// tile 0, so when K/V is larger than the L2 the oldest tiles are gone by the time they are needed
// again. Sawtooth order reverses the walk on every other Q tile of a CTA: the tiles read last are
// read first next time, while they are still in the L2 (paper Algorithm 4).
#pragma once

#include "attention/schedule_knobs.cuh"

namespace swr {
namespace attention {

// `round` counts the Q tiles this CTA (or, for a plain grid, this wave of CTAs) has done before.
template <KvOrder Order>
__device__ __forceinline__ int kv_tile_at(int step, int kv_tiles, int round) {
  const bool backward = Order == KvOrder::sawtooth && (round & 1);
  return backward ? kv_tiles - 1 - step : step;
}

}  // namespace attention
}  // namespace swr
