// The attention backward's main kernel (mma.sync, every GPU from sm_80; the GB10 too): each CTA
// owns a K/V tile of one (batch, K/V head), takes the tiles the schedule gives it
// (backward_schedule.cuh) and walks the Q tiles of its group's query heads that see its keys,
// staging Q, dO, L and delta through a cp.async pipeline kStages deep; backward_warp.cuh does the
// math. dK and dV stay in registers over the whole walk (a GQA group's query heads add into them
// without atomics); dQ is added into the fp32 accumulator once per step, with atomics, or in
// K/V-tile order (kDeterministicDq: every run adds the same values in the same order, so dQ is
// the same bit for bit).
#pragma once

#include "attention/attention_schedule.cuh"
#include "attention/backward/backward_args.cuh"
#include "attention/backward/backward_schedule.cuh"
#include "attention/backward/backward_warp.cuh"
#include "attention/backward/dq_turns.cuh"
#include "attention/backward/step_lists.cuh"
#include "attention/tile_copy.cuh"
#include "common/element.cuh"

namespace swr {
namespace attention {

// Head dims above this split 16 K/V rows over two warps (half of dK and dV's columns each).
constexpr int kBackwardSplitAboveHeadDim = 128;

template <int HeadDim, int BlockM, int BlockN, int Warps, int Stages, Element Elem, bool Causal,
          KvOrder Order, Persistence Persist, TileSwizzle Swizzle, int HeadGroup,
          bool DeterministicDq>
struct BackwardTraits {
  static constexpr int kHeadDim = HeadDim;
  static constexpr int kBlockM = BlockM;  // Q rows per step
  static constexpr int kBlockN = BlockN;  // K/V rows a CTA owns
  static constexpr int kWarps = Warps;
  static constexpr int kThreads = Warps * 32;
  static constexpr int kStages = Stages;
  static constexpr Element kElement = Elem;
  static constexpr bool kCausal = Causal;
  static constexpr KvOrder kOrder = Order;
  static constexpr Persistence kPersistence = Persist;
  static constexpr TileSwizzle kSwizzle = Swizzle;
  static constexpr int kHeadGroup = HeadGroup;
  static constexpr bool kDeterministicDq = DeterministicDq;

  static constexpr int kDSplit = HeadDim > kBackwardSplitAboveHeadDim ? 2 : 1;
  static constexpr int kRowsPerWarp = BlockN * kDSplit / Warps;
  // dQ of a step over the warps: m16 row slices first, the rest of the warps split the columns.
  static constexpr int kQRowAtoms = BlockM / 16;
  static constexpr int kDqRowAtoms = kQRowAtoms > Warps ? kQRowAtoms / Warps : 1;
  static constexpr int kDqColumnParts = Warps > kQRowAtoms ? Warps / kQRowAtoms : 1;

  static_assert(Stages >= 1 && Stages <= 3, "Q/dO pipeline depth 1..3");
  static_assert(HeadGroup >= 1, "head groups hold at least one head");
  static_assert(kRowsPerWarp % 16 == 0 && kRowsPerWarp >= 16,
                "each warp owns whole m16 slices of K/V rows");
  static_assert(BlockM % 16 == 0 && BlockM >= 32, "Q rows in k16 steps, at least 32");
  static_assert(kQRowAtoms % Warps == 0 || Warps % kQRowAtoms == 0,
                "dQ's row slices divide among the warps, or the warps among them");
  static_assert(HeadDim % (16 * kDqColumnParts) == 0, "dQ's column parts in n16 pairs");
};

template <class T>
struct BackwardTile {
  using Warp = BackwardWarp<T>;
  using QTile = typename Warp::QTile;
  using KvTile = typename Warp::KvTile;
  using DsTile = typename Warp::DsTile;
  static constexpr int kStageBytes = 2 * QTile::kElements * 2 + 2 * T::kBlockM * 4;
  // K, V, then kStages x (Q, dO, L * log2(e), delta), then dS^T (the resource model's
  // attention_backward_shared_bytes).
  static constexpr int kSharedBytes =
      2 * KvTile::kElements * 2 + T::kStages * kStageBytes + DsTile::kElements * 2;

  unsigned char* shared;

  __device__ __forceinline__ KvTile k_tile() const {
    return KvTile{reinterpret_cast<unsigned short*>(shared)};
  }
  __device__ __forceinline__ KvTile v_tile() const {
    return KvTile{reinterpret_cast<unsigned short*>(shared) + KvTile::kElements};
  }
  __device__ __forceinline__ unsigned char* stage(int slot) const {
    return shared + 2 * KvTile::kElements * 2 + slot * kStageBytes;
  }
  __device__ __forceinline__ QTile q_tile(int slot) const {
    return QTile{reinterpret_cast<unsigned short*>(stage(slot))};
  }
  __device__ __forceinline__ QTile do_tile(int slot) const {
    return QTile{reinterpret_cast<unsigned short*>(stage(slot)) + QTile::kElements};
  }
  __device__ __forceinline__ float* lse_log2(int slot) const {
    return reinterpret_cast<float*>(stage(slot) + 2 * QTile::kElements * 2);
  }
  __device__ __forceinline__ float* delta(int slot) const { return lse_log2(slot) + T::kBlockM; }
  __device__ __forceinline__ DsTile ds_tile() const {
    return DsTile{reinterpret_cast<unsigned short*>(shared + 2 * KvTile::kElements * 2 +
                                                    T::kStages * kStageBytes)};
  }
};

// q, k, v, d_o: the inputs at args' strides; dk, dv: [batch, kv_heads, seq_kv, HeadDim] outputs
// at args.dk/dv's strides; args.workspace filled by the preprocess. args.tile_counter (dynamic
// persistence) must be 0 at launch.
template <class T>
__device__ void backward(const void* q, const void* k, const void* v, const void* d_o, void* dk,
                         void* dv, const BackwardArgs& args) {
  using Warp = BackwardWarp<T>;
  extern __shared__ __align__(128) unsigned char shared_memory[];
  const BackwardTile<T> tiles{shared_memory};
  const int warp_index = threadIdx.x / 32;

  const int q_tiles = (args.seq_q + T::kBlockM - 1) / T::kBlockM;
  const int kv_tiles = (args.seq_kv + T::kBlockN - 1) / T::kBlockN;
  const int batch_kv_heads = args.batch * args.kv_heads;
  const int group_heads = args.heads / args.kv_heads;
  const TileRows<T::kThreads, T::kBlockN, T::kHeadDim> kv_rows;
  const TileRows<T::kThreads, T::kBlockM, T::kHeadDim> q_rows;

  for_each_tile<T::kPersistence>(
      kv_tiles * batch_kv_heads, args.tile_counter, args.wave_size, [&](int linear, int round) {
        const TileCoord coord =
            backward_tile_coord(T::kSwizzle, T::kHeadGroup, linear, kv_tiles, batch_kv_heads);
        const int batch = coord.batch_head / args.kv_heads;
        const int kv_head = coord.batch_head - batch * args.kv_heads;
        const int kv_tile = coord.q_tile;
        const int kv_row0 = kv_tile * T::kBlockN;
        const int first_q_tile = first_q_tile_of_kv_tile(T::kCausal, kv_tile, T::kBlockM,
                                                         T::kBlockN, args.seq_q, args.causal_shift);
        const int steps = group_heads * (q_tiles - first_q_tile);
        // The walk, and its steps of the copies (kStages - 1 ahead) and of the math.
        const BackwardWalk walk(T::kOrder, group_heads, first_q_tile, q_tiles, round);
        BackwardStep loading = walk.start();
        BackwardStep computing = loading;

        // Shared memory may still be read by the previous tile's dK/dV store.
        __syncthreads();
        const unsigned short* k_head =
            static_cast<const unsigned short*>(k) + row_offset(args.k, batch, kv_head, 0);
        const unsigned short* v_head =
            static_cast<const unsigned short*>(v) + row_offset(args.v, batch, kv_head, 0);
        kv_rows.load_async(tiles.k_tile(), k_head, kv_row0, args.seq_kv, args.k.seq);
        kv_rows.load_async(tiles.v_tile(), v_head, kv_row0, args.seq_kv, args.v.seq);
        cp_async_commit();

        // One group per step: its Q and dO tiles and its kBlockM values of L and delta. Called
        // for steps 0, 1, 2, ... in order: `loading` is at `step`.
        const auto issue = [&](int step) {
          if (step < steps) {
            const int head = kv_head * group_heads + loading.head_in_group;
            const int q_row0 = loading.q_tile * T::kBlockM;
            const int slot = step % T::kStages;
            q_rows.load_async(
                tiles.q_tile(slot),
                static_cast<const unsigned short*>(q) + row_offset(args.q, batch, head, 0), q_row0,
                args.seq_q, args.q.seq);
            q_rows.load_async(
                tiles.do_tile(slot),
                static_cast<const unsigned short*>(d_o) + row_offset(args.d_o, batch, head, 0),
                q_row0, args.seq_q, args.d_o.seq);
            copy_step_lists_async<T::kBlockM>(tiles, slot, args, batch, head, q_row0);
            walk.advance(loading);
          }
          cp_async_commit();  // empty past the last step: the wait counts stay uniform
        };
#pragma unroll
        for (int step = 0; step < T::kStages - 1; ++step) issue(step);

        Warp warp;
        warp.start(warp_index);
        for (int step = 0; step < steps; ++step) {
          const int slot = step % T::kStages;
          if constexpr (T::kStages == 1) {
            issue(step);
            cp_async_wait<0>();
            __syncthreads();
          } else {
            cp_async_wait<T::kStages - 2>();
            __syncthreads();  // this step's tiles visible; everyone is done with the slot refilled
            issue(step + T::kStages - 1);
          }
          const int head = kv_head * group_heads + computing.head_in_group;
          const int q_tile = computing.q_tile;
          const int q_row0 = q_tile * T::kBlockM;
          walk.advance(computing);

          typename Warp::Block s, dp;
          warp.scores(tiles.k_tile(), tiles.v_tile(), tiles.q_tile(slot), tiles.do_tile(slot), s,
                      dp);
          warp.softmax_gradient(s, dp, tiles.lse_log2(slot), tiles.delta(slot), kv_row0, q_row0,
                                args.causal_shift, args.scale_log2);
          warp.accumulate(warp.dv, s, tiles.do_tile(slot));
          warp.accumulate(warp.dk, dp, tiles.q_tile(slot));
          warp.store_ds(dp, tiles.ds_tile());
          __syncthreads();  // every warp's dS^T is in the tile

          float* dq_rows =
              args.workspace.dq_accum + dq_accum_offset(args, batch, head, q_row0, T::kHeadDim);
          int* semaphore = dq_semaphore(args, batch, head, q_tile, q_tiles);
          if constexpr (T::kDeterministicDq) wait_for_dq_turn(semaphore, kv_tile);
#pragma unroll
          for (int chunk = 0; chunk < Warp::kDqChunks; ++chunk) {
            typename Warp::DqPart dq;
            warp.dq_part(tiles.ds_tile(), tiles.k_tile(), chunk, dq);
            warp.add_dq(dq, chunk, dq_rows, args.seq_q - q_row0);
          }
          if constexpr (T::kDeterministicDq) signal_dq_added(semaphore);
        }
        cp_async_wait<0>();  // no copy may land in the staging tiles below

        // dK (scaled) and dV through the K and V tiles, for coalesced 16-byte stores.
        __syncthreads();  // every warp is past its last read of K (dQ) and V
        warp.stage(warp.dk, args.scale, tiles.k_tile());
        warp.stage(warp.dv, 1.f, tiles.v_tile());
        __syncthreads();
        kv_rows.store(tiles.k_tile(),
                      static_cast<unsigned short*>(dk) + row_offset(args.dk, batch, kv_head, 0),
                      kv_row0, args.seq_kv, args.dk.seq);
        kv_rows.store(tiles.v_tile(),
                      static_cast<unsigned short*>(dv) + row_offset(args.dv, batch, kv_head, 0),
                      kv_row0, args.seq_kv, args.dv.seq);
      });
}

}  // namespace attention
}  // namespace swr
