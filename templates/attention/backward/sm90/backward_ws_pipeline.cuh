// What both warp-specialized attention backward kernels on sm_90a share (backward_kernel_ws.cuh:
// two warpgroups of 64 K/V rows each; backward_kernel_ws_wide.cuh: one 64-row K/V tile whose
// products the two warpgroups split): the shared-memory rings and their barriers, the walk over
// tiles and steps that every role derives alike, and the producer warpgroup's roles.
//   producer (one thread)   K and V once per tile; each step's Q and dO tiles by TMA, its L and
//                           delta lists by bulk copies and its head and first Q row, into
//                           Stages-deep full/empty mbarrier rings.
//   scheduler (one thread)  dynamic persistence: claims the CTA's next tile ahead of its work.
// A kernel's traits name the plan (kKOffset, ..., kBarrierOffset), the tiles (kBlockM, kBlockN,
// kHeadDim, the byte counts) and the schedule knobs.
//
// Tensor maps (runtime/attention_backward/backward_launcher.hpp; 16-bit elements, 128-byte
// swizzle, OOB fill zero), rank 4 over each tensor's own strides, boxes of 64 columns:
//   q_map, d_o_map: dims {HeadDim, seq_q, heads, batch}, box {64, BlockM, 1, 1}
//   k_map, v_map:   dims {HeadDim, seq_kv, kv_heads, batch}, box {64, BlockN, 1, 1}
// Rows past a sequence read as zero: a key row past seq_kv gives S = 0 and some P, whose dV and dK
// rows are never written and whose dQ share is P times a zero row of K; a Q row past seq_q has
// L = +inf (the preprocess's padding), so P = 0.
#pragma once

#include "attention/attention_schedule.cuh"
#include "attention/backward/backward_args.cuh"
#include "attention/backward/backward_schedule.cuh"
#include "attention/sm90/role_tiles.cuh"
#include "common/sm90/cluster.cuh"
#include "common/sm90/mbarrier.cuh"
#include "common/sm90/pipeline.cuh"
#include "common/sm90/tile_queue.cuh"
#include "common/sm90/tma.cuh"
#include "common/sm90/warpgroup.cuh"

namespace swr {
namespace attention {
namespace sm90 {

using swr::sm90::PipelineBarriers;
using swr::sm90::PipelineState;
using swr::sm90::TmaDescriptor;

// A step of a tile's walk: the query head and the Q tile's first row.
struct BackwardWsStep {
  int head;
  int q_row0;
};

template <class T>
struct BackwardWsBarriers {
  PipelineBarriers<1> kv;            // K and V of the CTA's tile
  PipelineBarriers<T::kStages> q;    // a step's Q tile and its L list
  PipelineBarriers<T::kStages> d_o;  // a step's dO tile and its delta list
  swr::sm90::TileQueue<1> queue;     // a persistent CTA's tiles, from its scheduler
  // The wide kernel's hand-overs between its consumers, each once a step after one warpgroup's
  // 128 threads have arrived: P^T handed to the dS warpgroup, dS^T in its tile.
  unsigned long long p_full;
  unsigned long long ds_full;
  // The lagged consumers' dS^T slots (backward_kernel_ws.cuh): full once both consumers have
  // stored their rows of a step's dS^T, empty once both consumers' dQ of that step has read it.
  PipelineBarriers<2> ds_slots;
  // Each Q slot's step, written by the producer before its loads arrive on the slot's full
  // barrier, so that a consumer reads it once that wait is over (and gets it for one shared load,
  // not the walk's division).
  BackwardWsStep steps[T::kStages];
};

// The shared tiles of one CTA (BackwardWsTraits' plan), from a 1024-byte aligned base.
template <class T>
struct BackwardWsTiles {
  unsigned char* base;

  __device__ __forceinline__ unsigned char* k() const { return base + T::kKOffset; }
  __device__ __forceinline__ unsigned char* v() const { return base + T::kVOffset; }
  __device__ __forceinline__ unsigned char* q(int slot) const {
    return base + T::kQOffset + slot * T::kQBytes;
  }
  __device__ __forceinline__ unsigned char* d_o(int slot) const {
    return base + T::kDoOffset + slot * T::kQBytes;
  }
  __device__ __forceinline__ unsigned char* ds(int slot) const {
    return base + T::kDsOffset + slot * T::kDsBytes;
  }
  __device__ __forceinline__ unsigned char* dq() const { return base + T::kDqOffset; }
  __device__ __forceinline__ float* lse_log2(int slot) const {
    return reinterpret_cast<float*>(base + T::kLseOffset + slot * T::kListBytes);
  }
  __device__ __forceinline__ float* delta(int slot) const {
    return reinterpret_cast<float*>(base + T::kDeltaOffset + slot * T::kListBytes);
  }
  __device__ __forceinline__ BackwardWsBarriers<T>& barriers() const {
    return *reinterpret_cast<BackwardWsBarriers<T>*>(base + T::kBarrierOffset);
  }
};

// Every barrier a side frees or fills counts each of its threads' arrivals (not one a warp after
// a __syncwarp): compute-sanitizer's racecheck then sees every thread's reads ordered before the
// copy or the store that reuses the memory.

// What every role derives from a tile's linear index alone, so that all agree without talking.
struct BackwardWsTile {
  int batch;
  int kv_head;
  int kv_tile;
  int first_q_tile;
  int first_position;  // of the walk (backward_step_of_index): 0, or a split part's first
  int steps;       // query heads of the group x the Q tiles that see the K/V tile, or the part's
  int split_slot;  // a split part's slot of sums (sm90/backward_split_sums.cuh); -1: whole
};

// The CTA's tile of linear index `linear`; with CTA pairs (T::kClusterCtas == 2) the schedule's
// units of two neighbouring K/V tiles (backward_tile_unit), the two CTAs of a cluster, which walk
// the same Q tiles so that each loads half of a step's Q and dO for both (multicast). The units of
// the last partial wave come as parts (backward_last_wave: args.split_whole, args.split_parts), a
// pair's CTAs taking the same part.
template <class T>
__device__ __forceinline__ BackwardLastWave backward_ws_last_wave(const BackwardArgs& args) {
  if constexpr (T::kSplitsLastWave) {
    return {args.split_whole, args.split_parts};
  } else {
    return {1 << 30, 1};  // every unit whole (and backward_scheduled_units = units)
  }
}

template <class T>
__device__ __forceinline__ int backward_ws_total_tiles(const BackwardArgs& args) {
  const int units =
      backward_tile_units(args.kv_tiles, T::kClusterCtas) * args.batch * args.kv_heads;
  return backward_scheduled_units(backward_ws_last_wave<T>(args), units) * T::kClusterCtas;
}

template <class T>
__device__ __forceinline__ BackwardWsTile backward_ws_tile(int linear, const BackwardArgs& args) {
  const BackwardLastWave split = backward_ws_last_wave<T>(args);
  const int member = linear % T::kClusterCtas;
  const BackwardUnitPart part = backward_unit_part(split, linear / T::kClusterCtas);
  const BackwardTileUnit unit =
      backward_tile_unit(T::kSwizzle, T::kHeadGroup, part.unit * T::kClusterCtas + member,
                         args.kv_tiles, args.batch * args.kv_heads, T::kClusterCtas);
  BackwardWsTile tile;
  tile.batch = unit.batch_head / args.kv_heads;
  tile.kv_head = unit.batch_head - tile.batch * args.kv_heads;
  tile.kv_tile = unit.kv_tile;
  tile.first_q_tile =
      first_q_tile_of_kv_tile(T::kCausal, unit.first_kv_tile, T::kBlockM, T::kBlockN, args.seq_q,
                              args.causal_shift, args.q_tiles);
  const BackwardPartSteps steps =
      backward_part_steps(split, part.part, args.group_heads * (args.q_tiles - tile.first_q_tile));
  tile.first_position = steps.first;
  tile.steps = steps.count;
  tile.split_slot = part.part < 0 ? -1 : (part.unit - split.whole) * T::kClusterCtas + member;
  return tile;
}

// The positions a tile's walk counts through in round `round` (backward_positions over its steps,
// from its first position on).
template <class T>
__device__ __forceinline__ BackwardPositions backward_ws_walk(const BackwardWsTile& tile,
                                                              int round) {
  const BackwardPositions walk = backward_positions(T::kOrder, tile.steps, round);
  return {walk.first + tile.first_position, walk.last + tile.first_position, walk.stride};
}

// The step at position `index` of a tile's walk (backward_step_of_index): the query head and the
// Q tile's first row, a division a step: fewer values live across the steps than a BackwardWalk
// keeps (the producer has 24 to 40 registers). The producer alone computes it and hands it to the
// consumers with the step's Q slot (BackwardWsBarriers::steps).
template <class T>
__device__ __forceinline__ BackwardWsStep backward_ws_step(const BackwardWsTile& tile, int index,
                                                           const BackwardArgs& args) {
  const BackwardStep at = backward_step_of_index(index, tile.first_q_tile, args.q_tiles);
  return {tile.kv_head * args.group_heads + at.head_in_group, at.q_tile * T::kBlockM};
}

// The row of a step's first query among the workspace's rows (its lists, L and delta, and the dQ
// accumulator's rows alike: workspace_row + q_row0), in 32 bits, which the producer warpgroup's
// registers afford: the lists of any problem that fits a GPU's memory have fewer than 2^31 rows
// (the dQ accumulator beside them takes 128 bytes or more a row).
template <class T>
__device__ __forceinline__ unsigned backward_ws_list_row(const BackwardWsTile& tile,
                                                         const BackwardWsStep& at,
                                                         const BackwardArgs& args) {
  return static_cast<unsigned>(tile.batch * args.heads + at.head) * args.seq_q_padded + at.q_row0;
}

// The tiles of this CTA, body(linear, round) each, alike for every role: the grid's one computed
// by each (for_each_tile), a persistent CTA's taken from the scheduler's queue. A role that
// `Holds` each tile releases its queue entry only once its body is done (the producer: once it
// has issued the tile's loads). Static persistence's tiles are known from the start, but a tile
// loop of the consumers' own kept its count and the walk's state live across the steps: at 80 Q
// rows, and with lagged consumers, they spilled 48-184 bytes, some of it a step.
template <class T, bool Holds = false, class Body>
__device__ __forceinline__ void backward_ws_tiles(BackwardWsBarriers<T>& bars,
                                                  const BackwardArgs& args, Body&& body) {
  if constexpr (T::kPersistence == Persistence::grid) {
    // A pair's CTAs walk in the round of the pair's first tile (backward_unit_round).
    const auto in_unit_round = [&](int linear, int round) {
      if constexpr (T::kClusterCtas > 1)
        round = backward_unit_round(linear, args.wave_size, T::kClusterCtas);
      body(linear, round);
    };
    for_each_tile<T::kPersistence>(backward_ws_total_tiles<T>(args), args.tile_counter,
                                   args.wave_size, in_unit_round);
  } else {
    for (int round = 0;; ++round) {
      const int tile =
          warp_uniform(Holds ? bars.queue.peek(round) : bars.queue.pop(round), 0xffffffffu);
      if (tile != kNoMoreTiles) body(tile, round);
      if constexpr (Holds) bars.queue.release(round);
      if (tile == kNoMoreTiles) return;
    }
  }
}

// The scheduler of a persistent CTA (one thread of the producer warpgroup): the CTA's first tile,
// then each next one once the queue's slot is free, that is once every reader has taken the last
// tile and the producer has issued its loads. Static persistence's is every launched_ctas()-th
// tile; dynamic's is claimed from the counter then: a CTA claims its next tile when it is about
// to need it, so that tiles go out in the order the CTAs free up, as the
// hardware hands out a grid's. Claimed as each tile started, a CTA's next tile was settled a
// whole tile early; where tiles differ in length (causal) the tiles running at once drifted apart
// along their walks and missed in the L2: at B1 H32/8 S32768 D128 causal on the H100 the dynamic
// variant read 118 GB from DRAM against the grid's 24 and took 55.2 ms; claimed late, 37.1 ms,
// the grid's time (bench/results/attention-backward-ws-h200/dynamic-claim-2026-11-26). The
// producer and the consumers read the same entries.
template <class T>
__device__ __forceinline__ void schedule_tiles(BackwardWsBarriers<T>& bars,
                                               const BackwardArgs& args) {
  static_assert(T::kClusterCtas == 1, "persistent CTAs take single tiles");
  const int total = backward_ws_total_tiles<T>(args);
  int tile = blockIdx.x;
  for (int n = 0;; ++n) {
    bars.queue.wait_free(n);
    if (n > 0) {
      tile = T::kPersistence == Persistence::dynamic
                 ? dynamic_claimed_tile(atomicAdd(args.tile_counter, 1), launched_ctas())
                 : static_tile(blockIdx.x, n, launched_ctas());
    }
    if (tile >= total) {
      bars.queue.publish(n, kNoMoreTiles);
      return;
    }
    bars.queue.publish(n, tile);
  }
}

// Rows [row, row + Rows) of (batch, head) as 64-column boxes, chunk_bytes apart.
template <class T, int Rows>
__device__ __forceinline__ void load_rows(unsigned char* dst, const TmaDescriptor* map,
                                          unsigned long long* bar, int row, int head, int batch) {
#pragma unroll
  for (int c = 0; c < T::kHeadDim / 64; ++c) {
    swr::sm90::tma_load_4d(dst + c * Rows * 128, map, bar, c * 64, row, head, batch);
  }
}

// A step's Q (or dO) rows into `rows` of every CTA of the cluster: the 64-column boxes of Q, then
// of dO, dealt out in turn to the CTAs, each loading its boxes for all (multicast). `box` is the
// first box of this ring in that count.
template <class T>
__device__ __forceinline__ void load_shared_rows(unsigned char* rows, const TmaDescriptor* map,
                                                 unsigned long long* full, int box, int row,
                                                 int head, int batch, int rank) {
  if constexpr (T::kClusterCtas == 1) {
    load_rows<T, T::kBlockM>(rows, map, full, row, head, batch);
  } else {
#pragma unroll
    for (int c = 0; c < T::kHeadDim / 64; ++c) {
      if ((box + c) % T::kClusterCtas != rank) continue;
      swr::sm90::tma_load_4d_multicast(rows + c * T::kBlockM * 128, map, full, c * 64, row, head,
                                       batch, (1u << T::kClusterCtas) - 1);
    }
  }
}

// Q and dO of a step share one ring position: their slots fill and free in the same order.
template <class T>
__device__ __forceinline__ void produce(const TmaDescriptor* q_map, const TmaDescriptor* k_map,
                                        const TmaDescriptor* v_map, const TmaDescriptor* d_o_map,
                                        const BackwardWsTiles<T>& tiles, const BackwardArgs& args) {
  BackwardWsBarriers<T>& bars = tiles.barriers();
  PipelineState<1> kv_state;
  PipelineState<T::kStages> state;  // of the Q and the dO ring alike
  const int rank = T::kClusterCtas == 1 ? 0 : static_cast<int>(swr::sm90::cluster_cta_rank());
  // The launch block's counts (args.q_tiles, ...) rather than values computed here: they stay in
  // the constant bank, not in the producer's 24 registers.
  backward_ws_tiles<T, true>(bars, args, [&](int linear, int round) {
    const BackwardWsTile tile = backward_ws_tile<T>(linear, args);
    if (tile.steps == 0) return;  // no row sees the tile: dK = dV = 0, nothing to read
    bars.kv.producer_acquire(kv_state);
    swr::sm90::mbarrier_arrive_expect_tx(&bars.kv.full[0], 2 * T::kKvBytes);
    load_rows<T, T::kBlockN>(tiles.k(), k_map, &bars.kv.full[0], tile.kv_tile * T::kBlockN,
                             tile.kv_head, tile.batch);
    load_rows<T, T::kBlockN>(tiles.v(), v_map, &bars.kv.full[0], tile.kv_tile * T::kBlockN,
                             tile.kv_head, tile.batch);
    kv_state.advance();

    // The walk's positions counted through (backward_positions): keeping the step, the step count
    // and the round instead spilled 8 bytes of the producer's 24 registers with sawtooth order
    // and persistence.
    const BackwardPositions walk = backward_ws_walk<T>(tile, round);
#pragma unroll 1
    for (int index = walk.first;; index += walk.stride) {
      const BackwardWsStep at = backward_ws_step<T>(tile, index, args);
      const unsigned list = backward_ws_list_row<T>(tile, at, args);
      // One ring's free slot: the step's rows of Q (or dO) by TMA and their list (L or delta)
      // by a bulk copy, both counted on the slot's full barrier.
      // (With CTA pairs the slot's full barrier counts the rows the other CTA multicasts too.)
      auto load_step = [&](PipelineBarriers<T::kStages>& ring, unsigned char* rows,
                           const TmaDescriptor* map, int box, float* list_tile,
                           const float* list_rows) {
        unsigned long long* full = &ring.full[state.index];
        swr::sm90::mbarrier_arrive_expect_tx(full, T::kQBytes + T::kListBytes);
        load_shared_rows<T>(rows, map, full, box, at.q_row0, at.head, tile.batch, rank);
        swr::sm90::bulk_load(list_tile, list_rows + list, T::kListBytes, full);
      };
      bars.q.producer_acquire(state);
      bars.steps[state.index] = at;
      load_step(bars.q, tiles.q(state.index), q_map, 0, tiles.lse_log2(state.index),
                args.workspace.lse_log2);
      bars.d_o.producer_acquire(state);
      load_step(bars.d_o, tiles.d_o(state.index), d_o_map, T::kHeadDim / 64,
                tiles.delta(state.index), args.workspace.delta);
      state.advance();
      if (index == walk.last) break;
    }
  });
}

// A kernel's entry: one thread initializes the barriers, then warpgroup 0 gives its registers to
// the consumers and runs the producer (thread 0), the scheduler (thread 64, persistent CTAs)
// and `warp_one` (warp 1: the kernel's own role, if any); warpgroups 1 and 2 run `consumers`.
template <class T, class WarpOne, class Consumers>
__device__ __forceinline__ void run_backward_ws(
    const TmaDescriptor* q_map, const TmaDescriptor* k_map, const TmaDescriptor* v_map,
    const TmaDescriptor* d_o_map, const BackwardWsTiles<T>& tiles, const BackwardArgs& args,
    WarpOne&& warp_one, Consumers&& consumers) {
  static_assert(sizeof(BackwardWsBarriers<T>) <= T::kBarrierBytes, "barriers outgrow their space");
  if (threadIdx.x == 0) {
    BackwardWsBarriers<T>& bars = tiles.barriers();
    bars.kv.init(1, T::kConsumerThreads);
    // With CTA pairs a Q or dO slot is free once the other CTA's consumer warps have read it too.
    constexpr int kRingReleases =
        T::kConsumerThreads + (T::kClusterCtas - 1) * T::kConsumerThreads / 32;
    bars.q.init(1, kRingReleases);
    bars.d_o.init(1, kRingReleases);
    swr::sm90::mbarrier_init(&bars.p_full, 128);
    swr::sm90::mbarrier_init(&bars.ds_full, 128);
    bars.ds_slots.init(T::kConsumerThreads, T::kConsumerThreads);
    if constexpr (T::kPersistence != Persistence::grid) bars.queue.init(T::kTileReaders);
    swr::sm90::mbarrier_init_fence();
    swr::sm90::tma_prefetch_descriptor(q_map);
    swr::sm90::tma_prefetch_descriptor(k_map);
    swr::sm90::tma_prefetch_descriptor(v_map);
    swr::sm90::tma_prefetch_descriptor(d_o_map);
  }
  // The other CTA's multicasts land on this one's barriers: both are initialized first.
  if constexpr (T::kClusterCtas == 1) {
    __syncthreads();
  } else {
    swr::sm90::cluster_sync();
  }
  if (threadIdx.x < 128) {
    swr::sm90::warpgroup_reg_dealloc<T::kProducerRegisters>();
    if (threadIdx.x == 0) {
      produce<T>(q_map, k_map, v_map, d_o_map, tiles, args);
    } else if (threadIdx.x / 32 == 1) {
      warp_one();
    } else if (threadIdx.x == 64) {
      if constexpr (T::kPersistence != Persistence::grid) schedule_tiles<T>(tiles.barriers(), args);
    }
  } else {
    swr::sm90::warpgroup_reg_alloc<T::kConsumerRegisters>();
    consumers();
  }
  // Neither CTA of a pair leaves while the other may still release its slots here.
  if constexpr (T::kClusterCtas > 1) swr::sm90::cluster_sync();
}

// A consumer's release of a Q or dO slot: its own arrival, and with CTA pairs, once its warp has
// read the slot, one arrival of the warp on the other CTA's barrier (whose producer multicast
// half of the slot here).
template <class T, int Stages>
__device__ __forceinline__ void release_shared_slot(PipelineBarriers<Stages>& ring, int slot) {
  swr::sm90::mbarrier_arrive(&ring.empty[slot]);
  if constexpr (T::kClusterCtas == 2) {
    __syncwarp();
    if (threadIdx.x % 32 == 0)
      swr::sm90::mbarrier_arrive_cluster(&ring.empty[slot], swr::sm90::cluster_cta_rank() ^ 1u);
  }
}

}  // namespace sm90
}  // namespace attention
}  // namespace swr
