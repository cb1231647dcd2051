// Which Q tile each CTA computes, and in which round: tile swizzle + persistence.
// Nothing here knows how a tile is computed (forward_tile.cuh does that).
#pragma once

#include "attention/schedule_knobs.cuh"

namespace swr {
namespace attention {

struct TileCoord {
  int batch_head;  // b * heads + h
  int q_tile;
};

// Linear tile index -> (batch·head, q tile).
template <TileSwizzle Swizzle, int HeadGroup, bool Causal>
__device__ __forceinline__ TileCoord tile_coord(int linear, int q_tiles, int batch_heads) {
  TileCoord coord;
  if constexpr (Swizzle == TileSwizzle::head_major) {
    // Q tiles of one head are consecutive: CTAs running together share one head's K/V.
    coord.batch_head = linear / q_tiles;
    coord.q_tile = linear % q_tiles;
  } else if constexpr (Swizzle == TileSwizzle::heads_interleaved) {
    // Consecutive tiles belong to different heads: many heads' K/V are read at once.
    coord.q_tile = linear / batch_heads;
    coord.batch_head = linear % batch_heads;
  } else {
    // Groups of HeadGroup heads (sized so a group's K/V fits the L2), interleaved inside a group.
    const int group = linear / (HeadGroup * q_tiles);
    const int first_head = group * HeadGroup;
    const int heads_in_group = min(HeadGroup, batch_heads - first_head);
    const int within = linear - first_head * q_tiles;
    coord.q_tile = within / heads_in_group;
    coord.batch_head = first_head + within % heads_in_group;
  }
  // Causal: the longest rows first, so the last tiles handed out are the short ones.
  if constexpr (Causal) coord.q_tile = q_tiles - 1 - coord.q_tile;
  return coord;
}

// Calls body(linear_tile, round) for each tile of this CTA. `round` numbers the tiles a CTA takes
// (persistent modes) or the wave a tile runs in (grid: tiles are dispatched in index order,
// `wave_size` at a time), which is what the sawtooth order flips on.
template <Persistence Persist, class Body>
__device__ __forceinline__ void for_each_tile(int total_tiles, int* tile_counter, int wave_size,
                                              Body&& body) {
  if constexpr (Persist == Persistence::grid) {
    const int tile = blockIdx.x;
    if (tile < total_tiles) body(tile, tile / wave_size);
  } else if constexpr (Persist == Persistence::static_loop) {
    int round = 0;
    for (int tile = blockIdx.x; tile < total_tiles; tile += gridDim.x, ++round) body(tile, round);
  } else {
    // First tile from blockIdx, the rest claimed from a counter that starts at 0. The counter hands
    // out indices only and publishes no data, so a relaxed atomic suffices; the barriers order the
    // broadcast through shared memory and keep thread 0 from overwriting it before all have read.
    __shared__ int claimed_tile;
    int round = 0;
    for (int tile = blockIdx.x; tile < total_tiles; ++round) {
      body(tile, round);
      __syncthreads();
      if (threadIdx.x == 0) claimed_tile = atomicAdd(tile_counter, 1) + gridDim.x;
      __syncthreads();
      tile = claimed_tile;
    }
  }
}

}  // namespace attention
}  // namespace swr
