// The attention schedule: which Q tile each CTA computes in which round (tile swizzle, causal
// reversal, persistence) and which K/V tile it reads at each step (cyclic or sawtooth order).
// Pure functions of plain ints, compiled by NVRTC for the kernel and by the host compiler for the
// L2 model's simulator (model/schedule_replay.cpp) and its tests
// (tests/model/attention_schedule_test.cpp walks every knob on ragged shapes), so the schedule the
// model replays is the one the kernel runs. Nothing here knows how a tile is computed
// (forward_tile.cuh does that).
#pragma once

#include "common/host_device.cuh"

namespace swr {
namespace attention {

// The schedule knobs as the template sees them (swr::AttentionConfig's on the host).
enum class KvOrder { cyclic, sawtooth };
enum class Persistence { grid, static_loop, dynamic };
enum class TileSwizzle { head_major, heads_interleaved, head_groups };

struct TileCoord {
  int batch_head;  // b * heads + h
  int q_tile;
};

// Linear tile index in [0, q_tiles * batch_heads) -> (batch·head, q tile). `head_group` is used
// by head_groups only.
SWR_HOST_DEVICE TileCoord tile_coord(TileSwizzle swizzle, int head_group, bool causal, int linear,
                                     int q_tiles, int batch_heads) {
  TileCoord coord;
  if (swizzle == TileSwizzle::head_major) {
    // Q tiles of one head are consecutive: CTAs running together share one head's K/V.
    coord.batch_head = linear / q_tiles;
    coord.q_tile = linear - coord.batch_head * q_tiles;
  } else if (swizzle == TileSwizzle::heads_interleaved) {
    // Consecutive tiles belong to different heads: many heads' K/V are read at once.
    coord.q_tile = linear / batch_heads;
    coord.batch_head = linear - coord.q_tile * batch_heads;
  } else {
    // Groups of head_group heads (sized so a group's K/V fits the L2), interleaved inside a group;
    // the last group may hold fewer heads.
    const int group = linear / (head_group * q_tiles);
    const int first_head = group * head_group;
    const int rest = batch_heads - first_head;
    const int heads_in_group = rest < head_group ? rest : head_group;
    const int within = linear - first_head * q_tiles;
    coord.q_tile = within / heads_in_group;
    coord.batch_head = first_head + within - coord.q_tile * heads_in_group;
  }
  // Causal: the longest rows first, so the last tiles handed out are the short ones.
  if (causal) coord.q_tile = q_tiles - 1 - coord.q_tile;
  return coord;
}

// K/V tiles Q tile `q_tile` reads: all of them, or for causal those up to the last key its last
// valid row sees (row i sees keys j <= i + causal_shift; 0 for none when every row of the tile
// sees no key, as the first rows of a bottom-right mask with seq_q > seq_kv do). Never more for a
// later tile, whatever the shift: the causal reversal of tile_coord keeps the longest tiles first.
SWR_HOST_DEVICE int kv_tiles_of_q_tile(bool causal, int q_tile, int block_m, int block_n, int seq_q,
                                       int seq_kv, int causal_shift = 0) {
  const int all_kv_tiles = (seq_kv + block_n - 1) / block_n;
  if (!causal) return all_kv_tiles;
  const int rows_end_unclipped = (q_tile + 1) * block_m;
  const int rows_end = rows_end_unclipped < seq_q ? rows_end_unclipped : seq_q;
  const int keys_seen = rows_end + causal_shift;  // keys [0, rows_end - 1 + shift] are seen
  if (keys_seen <= 0) return 0;
  const int seen = (keys_seen + block_n - 1) / block_n;
  return seen < all_kv_tiles ? seen : all_kv_tiles;
}

// The Sawtooth Wavefront Reordering idea. CTAs that run together walk the same K/V tiles. In
// cyclic order every Q tile starts again at tile 0, so when K/V is larger than the L2 the oldest
// tiles are gone by the time they are needed again. Sawtooth order reverses the walk on every
// other round: the tiles read last are read first next time, while they are still in the L2
// (paper Algorithm 4). `round` is what the persistence rules below give.
SWR_HOST_DEVICE int kv_tile_at(KvOrder order, int step, int kv_tiles, int round) {
  const bool backward = order == KvOrder::sawtooth && (round & 1);
  return backward ? kv_tiles - 1 - step : step;
}

// Persistence: which tiles a CTA takes, and the round each one runs in.
//  grid:    CTA b computes tile b; round = the wave it runs in (tiles are dispatched in index
//           order, wave_size at a time).
//  static:  `ctas` CTAs; CTA c takes tiles c, c + ctas, c + 2·ctas, ...; round = tiles done.
//  dynamic: `ctas` CTAs; CTA c takes tile c first, then each claim of a counter that starts at 0
//           names tile claim + ctas (first come, first served); round = tiles done.
// Every mode starts CTA c on tile c.
SWR_HOST_DEVICE int grid_round(int tile, int wave_size) {
  return tile / wave_size;
}

SWR_HOST_DEVICE int static_tile(int cta, int round, int ctas) {
  return cta + round * ctas;
}

SWR_HOST_DEVICE int dynamic_claimed_tile(int claim, int ctas) {
  return claim + ctas;
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// The grid's CTA count, read where it is used: a volatile read is not hoisted out of a tile loop,
// so the count never occupies a register across it (a warp-specialized producer has 24).
__device__ __forceinline__ int launched_ctas() {
  int ctas;
  asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(ctas));
  return ctas;
}

// Calls body(linear_tile, round) for each tile of this CTA, by the rules above.
template <Persistence Persist, class Body>
__device__ __forceinline__ void for_each_tile(int total_tiles, int* tile_counter, int wave_size,
                                              Body&& body) {
  if constexpr (Persist == Persistence::grid) {
    const int tile = blockIdx.x;
    if (tile < total_tiles) body(tile, grid_round(tile, wave_size));
  } else if constexpr (Persist == Persistence::static_loop) {
    for (int round = 0;; ++round) {
      const int tile = static_tile(blockIdx.x, round, launched_ctas());
      if (tile >= total_tiles) break;
      body(tile, round);
    }
  } else {
    // The counter hands out indices only and publishes no data, so a relaxed atomic suffices; the
    // barriers order the broadcast through shared memory and keep thread 0 from overwriting it
    // before all have read.
    __shared__ int claimed_tile;
    int round = 0;
    for (int tile = blockIdx.x; tile < total_tiles; ++round) {
      body(tile, round);
      __syncthreads();
      if (threadIdx.x == 0)
        claimed_tile = dynamic_claimed_tile(atomicAdd(tile_counter, 1), launched_ctas());
      __syncthreads();
      tile = claimed_tile;
    }
  }
}
#endif

}  // namespace attention
}  // namespace swr
