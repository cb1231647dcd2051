// How one Q tile is computed: FlashAttention-2 forward with mma.sync m16n8k16. This file stages
// Q, K and V through shared memory (a cp.async pipeline kStages deep); warp_rows.cuh does the math.
// The K/V tiles arrive in whatever order kv_tile_of(step, kv_tiles) says: the math does not care,
// which is what keeps the schedule (attention_schedule.cuh) apart from this file.
#pragma once

#include "attention/attention_args.cuh"
#include "attention/attention_schedule.cuh"
#include "attention/tile_copy.cuh"
#include "attention/warp_rows.cuh"

namespace swr {
namespace attention {

template <class T>
struct ForwardTile {
  static constexpr int kHeadDim = T::kHeadDim;
  static constexpr int kBlockM = T::kBlockM;
  static constexpr int kBlockN = T::kBlockN;
  static constexpr int kStages = T::kStages;
  static constexpr int kThreads = T::kThreads;

  using QTile = SwizzledTile<kBlockM, kHeadDim>;
  using KvTile = SwizzledTile<kBlockN, kHeadDim>;

  // Shared memory: the Q tile, then kStages K tiles, then kStages V tiles (the resource model's
  // attention_dynamic_shared_bytes).
  static constexpr int kSharedBytes = (QTile::kElements + 2 * kStages * KvTile::kElements) * 2;
  unsigned short* shared;

  __device__ explicit ForwardTile(unsigned short* shared_memory) : shared(shared_memory) {}

  // Slots are picked by a run-time step index: address arithmetic, not an array of views, so
  // that nothing lands in local memory.
  __device__ __forceinline__ QTile q_tile() const { return QTile{shared}; }
  __device__ __forceinline__ KvTile k_tile(int slot) const {
    return KvTile{shared + QTile::kElements + slot * KvTile::kElements};
  }
  __device__ __forceinline__ KvTile v_tile(int slot) const {
    return KvTile{shared + QTile::kElements + (kStages + slot) * KvTile::kElements};
  }

  // Computes rows [q_row0, q_row0 + kBlockM) of one (batch, head): q and o point at its row 0,
  // k and v at row 0 of its K/V head; rows are args' seq strides apart. kv_tile_of(step,
  // kv_tiles) names the K/V tile read at each step 0..kv_tiles-1.
  // lse_rows: row 0 of the (batch, head)'s log-sum-exp, or null when the caller wants none.
  template <class KvTileOf>
  __device__ void compute(const unsigned short* q, const unsigned short* k, const unsigned short* v,
                          unsigned short* o, float* lse_rows, int q_row0, const AttentionArgs& args,
                          KvTileOf kv_tile_of) {
    WarpRows<T> rows;
    rows.lane = threadIdx.x % 32;
    rows.first_row = (threadIdx.x / 32) * WarpRows<T>::kRowsPerWarp;
    const int seq_q = args.seq_q;
    const int seq_kv = args.seq_kv;

    const int kv_tiles = kv_tiles_of_q_tile(T::kCausal, q_row0 / kBlockM, kBlockM, kBlockN, seq_q,
                                            seq_kv, args.causal_shift);

    // Shared memory may still be read by the previous tile's output store.
    __syncthreads();
    const TileRows<kThreads, kBlockM, kHeadDim> q_rows;
    q_rows.load_async(q_tile(), q, q_row0, seq_q, args.q.seq);
    cp_async_commit();

    // Each step commits two groups (K, then V) so that Q·K^T can start while V is in flight.
    const TileRows<kThreads, kBlockN, kHeadDim> kv_rows;
    auto issue_kv = [&](int step) {
      if (step < kv_tiles) {
        const int kv_row0 = kv_tile_of(step, kv_tiles) * kBlockN;
        kv_rows.load_async(k_tile(step % kStages), k, kv_row0, seq_kv, args.k.seq);
        cp_async_commit();
        kv_rows.load_async(v_tile(step % kStages), v, kv_row0, seq_kv, args.v.seq);
        cp_async_commit();
      } else {
        cp_async_commit();  // empty groups keep the wait counts below uniform
        cp_async_commit();
      }
    };
#pragma unroll
    for (int step = 0; step < kStages - 1; ++step) issue_kv(step);

    cp_async_wait<2 * (kStages - 1)>();
    __syncthreads();
    rows.start(q_tile());

    for (int step = 0; step < kv_tiles; ++step) {
      const int slot = step % kStages;
      if constexpr (kStages == 1) {
        issue_kv(step);
        cp_async_wait<1>();
        __syncthreads();
      } else {
        cp_async_wait<2 * (kStages - 1) - 1>();
        __syncthreads();  // K(step) visible; everyone is done with the slot refilled next
        issue_kv(step + kStages - 1);
      }

      typename WarpRows<T>::Scores scores;
      rows.scores(q_tile(), k_tile(slot), scores);
      rows.mask(scores, q_row0, kv_tile_of(step, kv_tiles) * kBlockN, seq_kv, args.causal_shift);
      rows.softmax(scores, args.scale_log2);

      if constexpr (kStages == 1) {
        cp_async_wait<0>();
      } else {
        cp_async_wait<2 * (kStages - 1)>();
      }
      __syncthreads();  // V(step) visible
      rows.accumulate(scores, v_tile(slot));
      if constexpr (kStages == 1) __syncthreads();  // the single slot is refilled next step
    }

    // O / l, staged through the Q tile for 16-byte coalesced stores. Every warp is past its last
    // read of Q: those happen before the "V(step) visible" barrier of the last step.
    rows.store_normalised(q_tile());
    if (lse_rows != nullptr) rows.store_lse(lse_rows, q_row0, seq_q);
    __syncthreads();
    q_rows.store(q_tile(), o, q_row0, seq_q, args.o.seq);
  }
};

}  // namespace attention
}  // namespace swr
