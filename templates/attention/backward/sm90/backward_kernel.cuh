// The attention backward's main kernel on sm_90a, every product a wgmma: the mma.sync kernel's
// schedule and workspace (backward_kernel.cuh: a CTA owns a K/V tile and walks the Q tiles of its
// group's query heads that see it, dK and dV in registers, dQ added into the fp32 accumulator),
// with each warpgroup owning 64 K/V rows. At each step a warpgroup computes
//   S^T = K Q^T, dP^T = V dO^T          wgmma SS, [64 K/V rows x BlockM Q rows]
//   P^T = 2^(S^T scale log2(e) - L log2(e)), dS^T = P^T o (dP^T - delta)   in registers
//   dV += P^T dO                         wgmma RS: P^T packed from the accumulators
//   dS^T to shared memory, then dQ = dS K   wgmma SS, dS read MN-major (the transpose bit)
//   dK += dS^T Q                         wgmma RS, while it adds its part of dQ with 16-byte
//                                        reductions Q, dO, L and delta are staged by cp.async,
// Stages deep, into the layout wgmma reads (no tensor map: the same launch as the mma.sync
// kernel); the copy of step s + Stages - 1 overlaps the products of step s.
#pragma once

#include "attention/attention_schedule.cuh"
#include "attention/backward/backward_args.cuh"
#include "attention/backward/backward_schedule.cuh"
#include "attention/backward/dq_turns.cuh"
#include "attention/backward/sm90/backward_fragments.cuh"
#include "attention/backward/sm90/backward_step.cuh"
#include "attention/backward/sm90/backward_traits.cuh"
#include "attention/backward/step_lists.cuh"
#include "common/element.cuh"
#include "common/ptx.cuh"
#include "common/sm90/swizzled_chunk_copy.cuh"
#include "common/sm90/tma.cuh"
#include "common/sm90/wgmma.cuh"
#include "common/sm90/wgmma_any_n.cuh"

namespace swr {
namespace attention {
namespace sm90 {

// The shared tiles of one CTA (BackwardTraits' plan), from a 1024-byte aligned base.
template <class T>
struct BackwardTilesSm90 {
  unsigned char* base;

  __device__ __forceinline__ unsigned char* k() const { return base + T::kKOffset; }
  __device__ __forceinline__ unsigned char* v() const { return base + T::kVOffset; }
  __device__ __forceinline__ unsigned char* q(int slot) const {
    return base + T::kQOffset + slot * T::kQBytes;
  }
  __device__ __forceinline__ unsigned char* d_o(int slot) const {
    return base + T::kDoOffset + slot * T::kQBytes;
  }
  __device__ __forceinline__ unsigned char* ds() const { return base + T::kDsOffset; }
  __device__ __forceinline__ float* lse_log2(int slot) const {
    return reinterpret_cast<float*>(base + T::kListOffset + slot * T::kListBytes);
  }
  __device__ __forceinline__ float* delta(int slot) const { return lse_log2(slot) + T::kBlockM; }
};

// dQ's part of this warpgroup into the accumulator rows of the step (`rows` of them lie inside
// the sequence): a lane swaps one row's pair with the neighbouring quad so that each adds four
// consecutive columns of one row in one 16-byte reduction (backward_warp.cuh's add_dq).
template <class T>
__device__ __forceinline__ void add_dq(const float* dq, float* dq_rows, int first_row,
                                       int first_column, int rows, const WarpgroupLane& at) {
  const bool odd = at.quad() % 2 != 0;
  const int row = first_row + 16 * at.warp + at.group() + (odd ? 8 : 0);
  float* line = dq_rows + static_cast<long long>(row) * T::kHeadDim + first_column;
#pragma unroll
  for (int j = 0; j < T::kDqColumns / 8; ++j) {
    const float* c = dq + 4 * j;
    // Every lane shuffles (no lane may skip before the exchange).
    const float given0 = __shfl_xor_sync(0xffffffffu, odd ? c[0] : c[2], 1);
    const float given1 = __shfl_xor_sync(0xffffffffu, odd ? c[1] : c[3], 1);
    const float four[4] = {odd ? given0 : c[0], odd ? given1 : c[1], odd ? c[2] : given0,
                           odd ? c[3] : given1};
    if (row < rows) reduce_add_four(line + 8 * j + 4 * (at.quad() / 2), four);
  }
}

// As backward_kernel.cuh's backward(): q, k, v, d_o at args' strides, dk and dv written, the
// workspace filled by the preprocess. Launch: kThreads threads, kSharedBytes of dynamic shared
// memory.
template <class T>
__device__ void backward(const void* q, const void* k, const void* v, const void* d_o, void* dk,
                         void* dv, const BackwardArgs& args) {
  using namespace swr::sm90;
  constexpr int kScoreRegs = T::kBlockM / 2;  // S^T and dP^T: m64 x BlockM
  constexpr int kPackedRegs = T::kBlockM / 4;
  constexpr int kAccumRegs = T::kHeadDim / 2;  // dK and dV: m64 x HeadDim
  constexpr int kDqRegs = T::kDqColumns / 2;
  using KvCopy = SwizzledChunkCopy<T::kThreads, T::kBlockN, T::kHeadDim>;
  using QCopy = SwizzledChunkCopy<T::kThreads, T::kBlockM, T::kHeadDim>;

  extern __shared__ __align__(1024) unsigned char shared_memory[];
  const BackwardTilesSm90<T> tiles{reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(shared_memory) + 1023) & ~1023ull)};
  const int wg = threadIdx.x / 128;
  const WarpgroupLane at{static_cast<int>(threadIdx.x % 128) / 32,
                         static_cast<int>(threadIdx.x % 32)};
  const int wg_row0 = wg * 64;  // this warpgroup's K/V rows within the tile
  // Its part of dQ: 64 rows, or a 64-column-aligned share of the columns.
  const int dq_row0 = T::dq_row0(wg);
  const int dq_column0 = T::dq_column0(wg);

  const int q_tiles = (args.seq_q + T::kBlockM - 1) / T::kBlockM;
  const int kv_tiles = (args.seq_kv + T::kBlockN - 1) / T::kBlockN;
  const int batch_kv_heads = args.batch * args.kv_heads;
  const int group_heads = args.heads / args.kv_heads;
  const KvCopy kv_copy;
  const QCopy q_copy;

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
        const BackwardWalk walk(T::kOrder, group_heads, first_q_tile, q_tiles, round);
        BackwardStep loading = walk.start();
        BackwardStep computing = loading;

        // Shared memory may still be read by the previous tile's last products.
        __syncthreads();
        kv_copy.load_async(
            shared_address(tiles.k()),
            static_cast<const unsigned short*>(k) + row_offset(args.k, batch, kv_head, 0), kv_row0,
            args.seq_kv, args.k.seq);
        kv_copy.load_async(
            shared_address(tiles.v()),
            static_cast<const unsigned short*>(v) + row_offset(args.v, batch, kv_head, 0), kv_row0,
            args.seq_kv, args.v.seq);
        cp_async_commit();

        // One group per step: its Q and dO tiles and its BlockM values of L and delta. Called for
        // steps 0, 1, 2, ... in order: `loading` is at `step`.
        const auto issue = [&](int step) {
          if (step < steps) {
            const int head = kv_head * group_heads + loading.head_in_group;
            const int q_row0 = loading.q_tile * T::kBlockM;
            const int slot = step % T::kStages;
            q_copy.load_async(
                shared_address(tiles.q(slot)),
                static_cast<const unsigned short*>(q) + row_offset(args.q, batch, head, 0), q_row0,
                args.seq_q, args.q.seq);
            q_copy.load_async(
                shared_address(tiles.d_o(slot)),
                static_cast<const unsigned short*>(d_o) + row_offset(args.d_o, batch, head, 0),
                q_row0, args.seq_q, args.d_o.seq);
            copy_step_lists_async<T::kBlockM>(tiles, slot, args, batch, head, q_row0);
            walk.advance(loading);
          }
          cp_async_commit();  // empty past the last step: the wait counts stay uniform
        };
#pragma unroll
        for (int step = 0; step < T::kStages - 1; ++step) issue(step);

        float dk_acc[kAccumRegs], dv_acc[kAccumRegs];
#pragma unroll
        for (int i = 0; i < kAccumRegs; ++i) {
          dk_acc[i] = 0.f;
          dv_acc[i] = 0.f;
        }
        const unsigned char* k_rows = tiles.k() + wg_row0 * 128;
        const unsigned char* v_rows = tiles.v() + wg_row0 * 128;

        for (int step = 0; step < steps; ++step) {
          const int slot = step % T::kStages;
          if constexpr (T::kStages == 1) {
            // The one slot is free once every warpgroup is past the last step, whose products
            // (dK reads Q after the dS barrier) each waited for.
            if (step > 0) __syncthreads();
            issue(step);
            cp_async_wait<0>();
          } else {
            cp_async_wait<T::kStages - 2>();
          }
          // The copies (generic proxy) become visible to wgmma (async proxy), then to everyone.
          fence_proxy_async_shared();
          __syncthreads();
          if constexpr (T::kStages > 1) issue(step + T::kStages - 1);
          const int head = kv_head * group_heads + computing.head_in_group;
          const int q_tile = computing.q_tile;
          const int q_row0 = q_tile * T::kBlockM;
          walk.advance(computing);
          const unsigned char* q_tile_bytes = tiles.q(slot);
          const unsigned char* do_tile_bytes = tiles.d_o(slot);

          // S^T = K Q^T and dP^T = V dO^T.
          float s[kScoreRegs], dp[kScoreRegs];
          wgmma_fence();
          issue_transposed_scores<T>(s, k_rows, q_tile_bytes);
          issue_transposed_scores<T>(dp, v_rows, do_tile_bytes);
          wgmma_wait<1>();
          fence_floats<kScoreRegs>(s);

          // P^T, then dV += P^T dO with P^T from registers.
          const float* lse_log2 = tiles.lse_log2(slot);
          const float* delta = tiles.delta(slot);
          exponentiate_scores<T>(
              s,
              [&](int j) { return *reinterpret_cast<const float2*>(lse_log2 + at.column(j, 0)); },
              at, q_row0 + args.causal_shift - kv_row0 - wg_row0, args.seq_kv - kv_row0 - wg_row0,
              args.scale_log2);
          unsigned p_packed[kPackedRegs];
          pack_scores<T>(s, p_packed);
          wgmma_fence();
          issue_register_product<T>(dv_acc, p_packed, do_tile_bytes);
          wgmma_wait<1>();  // dP^T is in (dV may still run)
          fence_floats<kScoreRegs>(dp);

          // dS^T = P^T o (dP^T - delta), packed.
          unsigned ds_packed[kPackedRegs];
          transposed_ds<T>(
              [&](int j, int h) { return make_float2(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]); }, dp,
              [&](int j) { return *reinterpret_cast<const float2*>(delta + at.column(j, 0)); },
              ds_packed);
          store_ds<T>(ds_packed, tiles.ds(), wg_row0, at);
          // Every warpgroup's dS^T is in the tile and visible to wgmma.
          fence_proxy_async_shared();
          __syncthreads();

          // dQ = dS K first, then dK += dS^T Q, which runs while this warpgroup adds its part of
          // dQ.
          float dq[kDqRegs];
          wgmma_fence();
          issue_dq<T>(dq, tiles.ds(), tiles.k(), dq_row0, dq_column0);
          issue_register_product<T>(dk_acc, ds_packed, q_tile_bytes);
          wgmma_wait<1>();  // dV and dQ are in (dK may still run)
          fence_floats<kDqRegs>(dq);
          fence_floats<kAccumRegs>(dv_acc);
          fence_words<kPackedRegs>(p_packed);

          float* dq_rows =
              args.workspace.dq_accum + dq_accum_offset(args, batch, head, q_row0, T::kHeadDim);
          int* semaphore = dq_semaphore(args, batch, head, q_tile, q_tiles);
          if constexpr (T::kDeterministicDq) wait_for_dq_turn(semaphore, kv_tile);
          add_dq<T>(dq, dq_rows, dq_row0, dq_column0, args.seq_q - q_row0, at);
          if constexpr (T::kDeterministicDq) signal_dq_added(semaphore);
          wgmma_wait<0>();
          fence_floats<kAccumRegs>(dk_acc);
          fence_words<kPackedRegs>(ds_packed);
        }
        cp_async_wait<0>();  // no copy may land in the tiles the next K/V tile reuses

        const int first_row = kv_row0 + wg_row0;
        store_rows<T>(dk_acc, args.scale,
                      static_cast<unsigned short*>(dk) + row_offset(args.dk, batch, kv_head, 0),
                      args.dk.seq, first_row, args.seq_kv, at);
        store_rows<T>(dv_acc, 1.f,
                      static_cast<unsigned short*>(dv) + row_offset(args.dv, batch, kv_head, 0),
                      args.dv.seq, first_row, args.seq_kv, at);
      });
}

}  // namespace sm90
}  // namespace attention
}  // namespace swr
