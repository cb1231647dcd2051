// The tiles each role of the warp-specialized kernel walks, by the persistence rules of
// attention_schedule.cuh. grid and static: every role computes the same sequence on its own
// (for_each_tile). dynamic: the producer thread claims tiles from the global counter
// (dynamic_claimed_tile, the mma_sync kernel's rule; the launcher zeroes the counter before each
// launch for either path) and hands each to the consumers through a TileQueue in shared memory,
// since for_each_tile's __syncthreads broadcast cannot run inside role branches. The producer
// claims once it has issued a tile's last load: the consumers still have that tile's last stages
// to compute, which hides the atomic. Both sides count the entries, so `round` (tiles done, what
// sawtooth flips on) agrees without talking.
#pragma once

#include "attention/attention_schedule.cuh"
#include "common/sm90/tile_queue.cuh"

namespace swr {
namespace attention {
namespace sm90 {

constexpr int kTileQueueDepth = 2;  // the producer may run one tile ahead of the consumers
using TileQueue = swr::sm90::TileQueue<kTileQueueDepth>;
constexpr int kNoMoreTiles = -1;

// A tile index from an atomic or from shared memory is, to the compiler, a per-thread value, and
// so is everything derived from it (coordinates, loop bounds, masks): it holds them in vector
// registers, and the consumers spill at 160 (3 warpgroups, D=128, causal) and the producer at 24.
// Read from lane 0 it is warp-uniform, as blockIdx is for grid and static persistence.
__device__ __forceinline__ int warp_uniform(int value, unsigned lanes) {
  return __shfl_sync(lanes, value, 0);
}

template <Persistence Persist, class Body>
__device__ __forceinline__ void producer_tiles(int total_tiles, int* tile_counter, int wave_size,
                                               TileQueue& queue, Body&& body) {
  if constexpr (Persist != Persistence::dynamic) {
    for_each_tile<Persist>(total_tiles, tile_counter, wave_size, body);
  } else {
    int tile = blockIdx.x;
    for (int round = 0;; ++round) {
      if (tile >= total_tiles) {
        queue.push(round, kNoMoreTiles);
        return;
      }
      queue.push(round, tile);
      body(tile, round);
      tile = warp_uniform(dynamic_claimed_tile(atomicAdd(tile_counter, 1), launched_ctas()), 1u);
    }
  }
}

template <Persistence Persist, class Body>
__device__ __forceinline__ void consumer_tiles(int total_tiles, int* tile_counter, int wave_size,
                                               TileQueue& queue, Body&& body) {
  if constexpr (Persist != Persistence::dynamic) {
    for_each_tile<Persist>(total_tiles, tile_counter, wave_size, body);
  } else {
    for (int round = 0;; ++round) {
      const int tile = warp_uniform(queue.pop(round), 0xffffffffu);
      if (tile == kNoMoreTiles) return;
      body(tile, round);
    }
  }
}

}  // namespace sm90
}  // namespace attention
}  // namespace swr
