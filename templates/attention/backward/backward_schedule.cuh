// The attention backward's schedule: which K/V tile each CTA owns in which round, and which Q
// tile (of which query head of its K/V head's group) it reads at each step. The forward's schedule
// with the roles of Q and K/V swapped: tile_coord and the persistence rules
// (attention_schedule.cuh) hand out (batch, K/V head, K/V tile) units, and the walk over the Q
// tiles is cyclic or sawtooth (kv_tile_at's rule): CTAs that run together read the same Q, dO,
// L and delta tiles, so reversing the walk on every other round finds the tiles read last still
// in the L2. Pure functions of plain ints, compiled by NVRTC for the kernels and by the host
// compiler for the L2 model's replay and the tests.
#pragma once

#include "attention/attention_schedule.cuh"
#include "common/host_device.cuh"

namespace swr {
namespace attention {

// The first Q tile with a row that sees a key of K/V tile `kv_tile` (row i sees keys
// j <= i + causal_shift): 0 without causal; q_tiles when no row does (the tile's dK and dV are 0).
// `q_tiles`: seq_q in block_m rows (a caller that keeps it passes it in).
SWR_HOST_DEVICE int first_q_tile_of_kv_tile(bool causal, int kv_tile, int block_m, int block_n,
                                            int seq_q, int causal_shift, int q_tiles) {
  if (!causal) return 0;
  const int first_row = kv_tile * block_n - causal_shift;  // the first row seeing the first key
  if (first_row <= 0) return 0;
  if (first_row >= seq_q) return q_tiles;
  return first_row / block_m;
}
SWR_HOST_DEVICE int first_q_tile_of_kv_tile(bool causal, int kv_tile, int block_m, int block_n,
                                            int seq_q, int causal_shift) {
  return first_q_tile_of_kv_tile(causal, kv_tile, block_m, block_n, seq_q, causal_shift,
                                 (seq_q + block_m - 1) / block_m);
}

// One step of a CTA's walk: the query head of the group (0 .. group size - 1) and the Q tile.
struct BackwardStep {
  int head_in_group;
  int q_tile;
};

// Position `index` of the group's query heads x the Q tiles [first_q_tile, q_tiles), heads
// outer, tiles inner.
SWR_HOST_DEVICE BackwardStep backward_step_of_index(int index, int first_q_tile, int q_tiles) {
  const int tiles = q_tiles - first_q_tile;
  BackwardStep at;
  at.head_in_group = index / tiles;
  at.q_tile = first_q_tile + index - at.head_in_group * tiles;
  return at;
}

// Step `step` of the walk over `group_heads` query heads x the Q tiles [first_q_tile, q_tiles):
// those positions in order, the whole sequence reversed on odd rounds by the sawtooth order.
SWR_HOST_DEVICE BackwardStep backward_step_at(KvOrder order, int step, int group_heads,
                                              int first_q_tile, int q_tiles, int round) {
  const int index = kv_tile_at(order, step, group_heads * (q_tiles - first_q_tile), round);
  return backward_step_of_index(index, first_q_tile, q_tiles);
}

// The positions backward_step_at's steps 0 .. steps - 1 take, as a range to count through: from
// `first` to `last` by `stride` (+1, or -1 on a reversed round). What the warp-specialized
// producer keeps across the steps (one counter and its end).
struct BackwardPositions {
  int first;
  int last;
  int stride;
};
SWR_HOST_DEVICE BackwardPositions backward_positions(KvOrder order, int steps, int round) {
  const int first = kv_tile_at(order, 0, steps, round);
  const int last = kv_tile_at(order, steps - 1, steps, round);
  return {first, last, last >= first ? 1 : -1};
}

// The same walk one step after another without a division: what the kernel keeps (one walk and
// two positions on it, the loads running Stages - 1 steps ahead of the math).
// backward_step_at is its definition; tests/model/backward_schedule_test.cpp checks that both
// agree on every walk.
struct BackwardWalk {
  int first_q_tile;
  int last_q_tile;
  int last_head;
  bool reversed;

  SWR_HOST_DEVICE BackwardWalk(KvOrder order, int group_heads, int first, int q_tiles, int round)
      : first_q_tile(first),
        last_q_tile(q_tiles - 1),
        last_head(group_heads - 1),
        reversed(order == KvOrder::sawtooth && (round & 1)) {}

  SWR_HOST_DEVICE BackwardStep start() const {
    return reversed ? BackwardStep{last_head, last_q_tile} : BackwardStep{0, first_q_tile};
  }

  SWR_HOST_DEVICE void advance(BackwardStep& at) const {
    if (!reversed) {
      if (at.q_tile < last_q_tile) {
        ++at.q_tile;
      } else {
        at.q_tile = first_q_tile;
        ++at.head_in_group;
      }
    } else if (at.q_tile > first_q_tile) {
      --at.q_tile;
    } else {
      at.q_tile = last_q_tile;
      --at.head_in_group;
    }
  }
};

// The linear index of (K/V tile, batch * kv_heads + K/V head) units in the grid: tile_coord's
// rules, with `kv_tiles` in the role of the Q tiles. Never reversed for causal: K/V tile 0 is
// seen by the most Q tiles, so the natural order already hands out the longest work first.
SWR_HOST_DEVICE TileCoord backward_tile_coord(TileSwizzle swizzle, int head_group, int linear,
                                              int kv_tiles, int batch_kv_heads) {
  return tile_coord(swizzle, head_group, false, linear, kv_tiles, batch_kv_heads);
}

// K/V tiles handed out `ctas` at a time (CTA pairs, AttentionBackwardConfig::cta_pairs: 2; else
// 1): backward_tile_coord's order over units of `ctas` neighbouring K/V tiles of one (batch, K/V
// head), linear tile u * ctas + m being member m of unit u. A unit's CTAs walk the same Q tiles,
// those that see its first K/V tile (the later tiles' extra steps are masked whole, causal); a
// member past the last K/V tile (kv_tiles not a multiple of ctas) reads zero K and V and writes
// nothing.
struct BackwardTileUnit {
  int batch_head;
  int kv_tile;        // this member's
  int first_kv_tile;  // the unit's first: where its walk starts
};
SWR_HOST_DEVICE int backward_tile_units(int kv_tiles, int ctas) {
  return (kv_tiles + ctas - 1) / ctas;
}
SWR_HOST_DEVICE int backward_tile_count(int kv_tiles, int batch_kv_heads, int ctas) {
  return backward_tile_units(kv_tiles, ctas) * ctas * batch_kv_heads;
}
// The round a grid's tile `linear` walks in: its unit's first tile's (grid_round alone would split
// a pair where the wave is odd, and the two CTAs' sawtooth walks would differ).
SWR_HOST_DEVICE int backward_unit_round(int linear, int wave_size, int ctas) {
  return grid_round(linear - linear % ctas, wave_size);
}
SWR_HOST_DEVICE BackwardTileUnit backward_tile_unit(TileSwizzle swizzle, int head_group, int linear,
                                                    int kv_tiles, int batch_kv_heads, int ctas) {
  const TileCoord coord = backward_tile_coord(swizzle, head_group, linear / ctas,
                                              backward_tile_units(kv_tiles, ctas), batch_kv_heads);
  const int first = coord.q_tile * ctas;
  return {coord.batch_head, first + linear % ctas, first};
}

// The last partial wave, split. With U units on W resident at once, U % W units would run as a
// last wave that leaves most SMs idle: at B2 H16 S16384 D128, 4096 K/V tiles on the H100's and
// H200's 132 SMs are 31 waves and 4 tiles, 3% of the kernel's time on 4 SMs. Where the warp-
// specialized kernel may (its dK and dV summed over parts: atomic dQ, no causal mask, whose last
// tiles are its shortest; backward_splits_last_wave below), those units' walks are cut into
// `parts` nearly equal ranges of steps, each a unit of its own, so that the last wave spreads over
// parts times as many SMs. Each part adds its dK and dV into a workspace slot, and the part that
// arrives last stores the sums (sm90/backward_split_sums.cuh). At most kBackwardSplitUnits units
// are split (the workspace's slots), each in at most kBackwardSplitParts parts, and never in more
// parts than its steps.
// Which kernels split (the warp-specialized kernel of two 64-row K/V warpgroups; the host adds
// that condition): atomic dQ, no causal mask, and not head groups, whose main loop ran 10% more
// cycles on every SM with the split's code in: there ptxas re-read the thread index in the
// consumers' step loop (5 S2R a step at m80; H100,
// bench/results/attention-backward-ws-h200/last-wave-2026-11-27). The others walk whole tiles.
SWR_HOST_DEVICE constexpr bool backward_splits_last_wave(bool causal, bool deterministic_dq,
                                                         bool head_groups) {
  return !causal && !deterministic_dq && !head_groups;
}
constexpr int kBackwardSplitUnits = 32;
constexpr int kBackwardSplitParts = 8;

struct BackwardLastWave {
  int whole;  // units [0, whole) go out whole
  int parts;  // each later unit as `parts` units (1: nothing split)
};
SWR_HOST_DEVICE BackwardLastWave backward_last_wave(int units, int wave_units, int steps) {
  const int tail = units % wave_units;
  int parts = tail > 0 ? wave_units / tail : 0;
  if (parts > kBackwardSplitParts) parts = kBackwardSplitParts;
  if (parts > steps) parts = steps;
  if (tail > kBackwardSplitUnits || parts < 2) return {units, 1};
  return {units - tail, parts};
}
// What the schedule hands out: the whole units, then every part of the split ones.
SWR_HOST_DEVICE int backward_scheduled_units(const BackwardLastWave& split, int units) {
  return split.whole + (units - split.whole) * split.parts;
}

// Scheduled unit `scheduled`: the unit, and which part of it (-1: all of it). A split unit's parts
// are consecutive, so that they run together and share its K and V in the L2.
struct BackwardUnitPart {
  int unit;
  int part;
};
SWR_HOST_DEVICE BackwardUnitPart backward_unit_part(const BackwardLastWave& split, int scheduled) {
  if (scheduled < split.whole) return {scheduled, -1};
  const int split_index = scheduled - split.whole;
  const int split_unit = split_index / split.parts;
  return {split.whole + split_unit, split_index - split_unit * split.parts};
}
// The positions of part `part` of a walk of `steps` (all of them for part -1), as a count from the
// first.
struct BackwardPartSteps {
  int first;
  int count;
};
SWR_HOST_DEVICE BackwardPartSteps backward_part_steps(const BackwardLastWave& split, int part,
                                                      int steps) {
  if (part < 0) return {0, steps};
  const int first = part * steps / split.parts;
  return {first, (part + 1) * steps / split.parts - first};
}

}  // namespace attention
}  // namespace swr
