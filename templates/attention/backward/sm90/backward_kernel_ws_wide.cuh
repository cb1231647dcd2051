// The warp-specialized attention backward for wide heads (head dim 256) on sm_90a: the schedule,
// workspace, producer and rings of the other warp-specialized kernel (backward_ws_pipeline.cuh),
// with a 64-row K/V tile whose products the two consumer warpgroups split by kind, since one
// warpgroup's registers hold dK or dV of 64 rows x 256 columns, not both:
//   P warpgroup (1)    S^T = K Q^T                  SS, [64 K/V rows x 64 Q rows]
//                      P^T = 2^(S^T scale log2(e) - L log2(e)), packed, handed over
//                      dV += P^T dO                 RS
//   dS warpgroup (2)   dP^T = V dO^T                SS
//                      dS^T = P^T o (dP^T - delta), packed, to shared memory
//                      dK += dS^T Q                 RS
//   both               dQ = dS K, half the columns each, added into the workspace's accumulator
//                      with 16-byte reductions (DqFragmentLayout), no dQ tile in shared memory
// The two run a step apart in phase: while one does its pointwise work the other's products keep
// the tensor cores busy (the P warpgroup's dV runs while the dS warpgroup forms dS^T). Two
// mbarriers a step order them, each filled by one warpgroup and awaited by the other: P^T handed
// over, and dS^T in shared memory (named barriers reached from the two roles' own code were
// divergent to compute-sanitizer's synccheck).
// dK and dV stay in registers for the whole tile and are written at its end.
#pragma once

#include "attention/backward/dq_turns.cuh"
#include "attention/backward/sm90/backward_fragments.cuh"
#include "attention/backward/sm90/backward_step.cuh"
#include "attention/backward/sm90/backward_ws_pipeline.cuh"
#include "attention/backward/sm90/backward_ws_wide_traits.cuh"
#include "common/element.cuh"
#include "common/ptx.cuh"
#include "common/sm90/wgmma.cuh"
#include "common/sm90/wgmma_any_n.cuh"

namespace swr {
namespace attention {
namespace sm90 {

using swr::sm90::fence_floats;
using swr::sm90::fence_words;

enum class WideRole { p = 0, ds = 1 };

// P^T of a step as the P warpgroup hands it to the dS warpgroup: packed word i of consumer thread
// t at [i][t] (both warpgroups' accumulators map thread t to the same elements).
template <class T>
__device__ __forceinline__ unsigned* p_exchange(const BackwardWsTiles<T>& tiles) {
  return reinterpret_cast<unsigned*>(tiles.base + T::kPOffset);
}

// This warpgroup's half of a step's dQ into the accumulator's block of the Q tile: registers
// 4j..4j+3 at float 4 (128 j + thread) of its part (DqFragmentLayout), one 16-byte reduction each.
// In deterministic mode a K/V tile adds once both halves of every earlier one have.
template <class T>
__device__ __forceinline__ void add_dq_half(const float* dq, float* tile_block, int* semaphore,
                                            int kv_tile, WideRole role) {
  using namespace swr::sm90;
  const int barrier = barrier_id::kConsumer0 + static_cast<int>(role);
  if constexpr (T::kDeterministicDq) {
    if (threadIdx.x % 128 == 0) spin_until_dq_turn(semaphore, 2 * kv_tile);
    named_barrier_sync(barrier, 128);
  }
  float* part =
      tile_block + static_cast<int>(role) * T::DqLayout::kWarpgroupFloats + 4 * (threadIdx.x % 128);
#pragma unroll
  for (int j = 0; j < T::kDqColumns / 8; ++j) {
    const float four[4] = {dq[4 * j], dq[4 * j + 1], dq[4 * j + 2], dq[4 * j + 3]};
    reduce_add_four(part + 512 * j, four);
  }
  if constexpr (T::kDeterministicDq) {
    __threadfence();
    named_barrier_sync(barrier, 128);
    if (threadIdx.x % 128 == 0) atomicAdd(semaphore, 1);
  }
}

// A warpgroup's scores of a step, from one ring (Q and L, or dO and delta): acc = its K or V
// tile times the ring's tile transposed (S^T or dP^T), and this thread's columns of the ring's
// list; `filled` runs once the slot is full. The warpgroup's reads of the slot are done when it
// returns.
template <class T, class Filled>
__device__ __forceinline__ void scores_from_ring(PipelineBarriers<T::kStages>& ring,
                                                 const PipelineState<T::kStages>& state,
                                                 const unsigned char* kv_tile,
                                                 const unsigned char* tile, const float* list,
                                                 const WarpgroupLane& at, float* acc,
                                                 float2* columns, Filled&& filled) {
  using namespace swr::sm90;
  ring.consumer_wait(state);
  filled();
#pragma unroll
  for (int j = 0; j < T::kBlockM / 8; ++j)
    columns[j] = *reinterpret_cast<const float2*>(list + at.column(j, 0));
  wgmma_fence();
  issue_transposed_scores<T>(acc, kv_tile, tile);
  wgmma_wait<0>();
  fence_floats<T::kBlockM / 2>(acc);
  mbarrier_arrive(&ring.empty[state.index]);
}

// One consumer warpgroup's whole walk: its accumulator (dV for the P warpgroup, dK for the dS
// warpgroup) over each tile's steps, then written out.
template <class T, WideRole Role>
__device__ __forceinline__ void consume_wide(const BackwardWsTiles<T>& tiles, void* dk, void* dv,
                                             const BackwardArgs& args) {
  using namespace swr::sm90;
  constexpr int kScoreRegs = T::kBlockM / 2;  // S^T or dP^T: m64 x 64
  constexpr int kPackedRegs = T::kBlockM / 4;
  constexpr int kAccumRegs = T::kHeadDim / 2;  // dV or dK: m64 x HeadDim
  constexpr int kDqRegs = T::kDqColumns / 2;
  BackwardWsBarriers<T>& bars = tiles.barriers();
  const int thread = threadIdx.x % 128;
  const WarpgroupLane at{thread / 32, thread % 32};
  unsigned* exchange = p_exchange(tiles);

  PipelineState<1> kv_state;
  PipelineState<T::kStages> state;  // of the Q and the dO ring alike
  unsigned hand_overs = 0;          // steps so far: the parity of the hand-over barriers
  backward_ws_tiles<T>(bars, args, [&](int linear, int) {
    const BackwardWsTile tile = backward_ws_tile<T>(linear, args);
    const int kv_row0 = tile.kv_tile * T::kBlockN;
    float acc[kAccumRegs];
#pragma unroll
    for (int i = 0; i < kAccumRegs; ++i) acc[i] = 0.f;
    if (tile.steps > 0) bars.kv.consumer_wait(kv_state);
#pragma unroll 1
    for (int step = 0; step < tile.steps; ++step) {
      const int slot = state.index;
      BackwardWsStep at_step;  // read once the step's Q slot is full, before it is released
      const auto read_step = [&] { at_step = bars.steps[slot]; };
      // Where this step's dQ goes, computed where it is added (no registers held across the
      // products).
      const auto add_dq = [&](const float* dq) {
        float* tile_block =
            args.workspace.dq_accum +
            dq_accum_offset(args, tile.batch, at_step.head, at_step.q_row0, T::kHeadDim);
        int* semaphore = nullptr;
        if constexpr (T::kDeterministicDq) {
          semaphore = dq_semaphore(args, tile.batch, at_step.head, at_step.q_row0 / T::kBlockM,
                                   args.q_tiles);
        }
        add_dq_half<T>(dq, tile_block, semaphore, tile.kv_tile, Role);
      };
      float dq[kDqRegs];
      if constexpr (Role == WideRole::p) {
        float s[kScoreRegs];
        float2 lse[T::kBlockM / 8];
        scores_from_ring<T>(bars.q, state, tiles.k(), tiles.q(slot), tiles.lse_log2(slot), at, s,
                            lse, read_step);

        exponentiate_scores<T>(
            s, [&](int j) { return lse[j]; }, at, at_step.q_row0 + args.causal_shift - kv_row0,
            args.seq_kv - kv_row0, args.scale_log2);
        unsigned p[kPackedRegs];
        pack_scores<T>(s, p);
        // The last step's P^T was read before the dS warpgroup's dS^T barrier, which this one
        // passed.
#pragma unroll
        for (int i = 0; i < kPackedRegs; ++i) exchange[128 * i + thread] = p[i];
        mbarrier_arrive(&bars.p_full);

        bars.d_o.consumer_wait(state);
        wgmma_fence();
        issue_register_product<T>(acc, p, tiles.d_o(slot));  // dV += P^T dO
        mbarrier_wait(&bars.ds_full, hand_overs & 1);        // dS^T is in its tile
        issue_dq<T>(dq, tiles.ds(0), tiles.k(), T::dq_row0(0), T::dq_column0(0));
        wgmma_wait<1>();  // dV
        fence_floats<kAccumRegs>(acc);
        fence_words<kPackedRegs>(p);
        mbarrier_arrive(&bars.d_o.empty[slot]);
        wgmma_wait<0>();
        fence_floats<kDqRegs>(dq);
        add_dq(dq);
      } else {
        float dp[kScoreRegs];
        float2 delta[T::kBlockM / 8];
        scores_from_ring<T>(bars.d_o, state, tiles.v(), tiles.d_o(slot), tiles.delta(slot), at, dp,
                            delta, [] {});

        mbarrier_wait(&bars.p_full, hand_overs & 1);  // P^T is handed over
        unsigned p[kPackedRegs];
#pragma unroll
        for (int i = 0; i < kPackedRegs; ++i) p[i] = exchange[128 * i + thread];
        unsigned ds[kPackedRegs];
        transposed_ds<T>([&](int j, int h) { return unpack_pair<T::kElement>(p[2 * j + h]); }, dp,
                         [&](int j) { return delta[j]; }, ds);
        // One slot: both warpgroups' dQ of the last step, its only other reader, have completed
        // (the P warpgroup's before it handed this step's P^T over).
        store_ds<T>(ds, tiles.ds(0), 0, at);
        fence_proxy_async_shared();  // visible to the wgmma of both warpgroups
        mbarrier_arrive(&bars.ds_full);
        mbarrier_wait(&bars.ds_full, hand_overs & 1);  // every thread's rows are in

        bars.q.consumer_wait(state);
        read_step();
        wgmma_fence();
        issue_dq<T>(dq, tiles.ds(0), tiles.k(), T::dq_row0(1), T::dq_column0(1));
        issue_register_product<T>(acc, ds, tiles.q(slot));  // dK += dS^T Q
        wgmma_wait<1>();                                    // dQ, while dK runs
        fence_floats<kDqRegs>(dq);
        add_dq(dq);
        wgmma_wait<0>();
        fence_floats<kAccumRegs>(acc);
        fence_words<kPackedRegs>(ds);
        mbarrier_arrive(&bars.q.empty[slot]);  // Q is read
      }
      state.advance();
      ++hand_overs;
    }
    if (tile.steps > 0) {
      mbarrier_arrive(&bars.kv.empty[0]);  // every product reading K and V has completed
      kv_state.advance();
    }
    const bool dv_role = Role == WideRole::p;
    const TensorStrides& strides = dv_role ? args.dv : args.dk;
    store_rows<T>(acc, dv_role ? 1.f : args.scale,
                  static_cast<unsigned short*>(dv_role ? dv : dk) +
                      row_offset(strides, tile.batch, tile.kv_head, 0),
                  strides.seq, kv_row0, args.seq_kv, at);
  });
}

// dk, dv at args' strides; Q, K, V, dO through their tensor maps; the workspace filled by the
// preprocess. Launch: kThreads threads, kSharedBytes of dynamic shared memory.
template <class T>
__device__ __forceinline__ void backward_ws_wide(const TmaDescriptor* q_map,
                                                 const TmaDescriptor* k_map,
                                                 const TmaDescriptor* v_map,
                                                 const TmaDescriptor* d_o_map, void* dk, void* dv,
                                                 const BackwardArgs& args) {
  extern __shared__ __align__(1024) unsigned char shared_memory[];
  const BackwardWsTiles<T> tiles{swr::sm90::align_shared<1024>(shared_memory)};
  run_backward_ws<T>(
      q_map, k_map, v_map, d_o_map, tiles, args, [] {},
      [&] {
        if (swr::sm90::warpgroup_index() == 1) {
          consume_wide<T, WideRole::p>(tiles, dk, dv, args);
        } else {
          consume_wide<T, WideRole::ds>(tiles, dk, dv, args);
        }
      });
}

}  // namespace sm90
}  // namespace attention
}  // namespace swr
