// The warp-specialized attention backward on sm_90a: the schedule and workspace of the other two
// kernels (a CTA owns a 128-row K/V tile and walks the Q tiles of its group's query heads that
// see it: backward_schedule.cuh), with the work split by role so that no step waits on a block
// barrier or on its own global memory traffic.
//   producer (warpgroup 0, one thread)  K and V once per tile; each step's Q and dO tiles by TMA,
//       its L and delta lists by bulk copies and its head and first Q row, into Stages-deep
//       full/empty mbarrier rings.
//   dQ writer (warpgroup 0, one warp)   walks the tiles and steps as the producer does; each
//       step's dQ, which each consumer leaves in shared memory as its part (DqFragmentLayout),
//       added into the workspace's fp32 accumulator by one bulk reduction a part (in K/V-tile
//       order for the deterministic mode). With T::kDqFromRegisters there is no writer: each
//       consumer thread adds its dQ registers by vector reductions, and the buffer's bytes go.
//   consumers (warpgroups 1, 2)         64 K/V rows each, every product a wgmma:
//       S^T = K Q^T, dP^T = V dO^T              SS, [64 K/V rows x BlockM Q rows]
//       P^T = 2^(S^T scale log2(e) - L log2(e)), dS^T = P^T o (dP^T - delta)    in registers
//       dS^T to shared memory (two slots), then
//       dV += P^T dO                            RS: P^T packed from the accumulators
//       lockstep: one barrier of the consumers (every row of dS^T is in), then this step's
//       lagged: no barrier; the last step's, whose dS^T both consumers stored a step ago
//       dQ = dS K                               SS, dS read MN-major; a warpgroup takes half
//                                               the columns, or half the rows at 128 Q rows;
//                                               at 80 Q rows transposed, dQ^T = K^T dS^T
//                                               (dS stored K-major), half the columns each
//       dK += dS^T Q                            RS
// dK and dV stay in registers for the whole tile and are written at its end (a part of a split
// tile adds them to the other parts' first: backward_split_sums.cuh). Lagged consumers
// drift apart, so that one's exponentials can run beside the other's products; on the H200 they
// measured 0.90-1.07x their lockstep twins' speed with the causal mask and 0.95-1.03x without it
// (a knob the tuner chooses: AttentionBackwardConfig::consumers).
//
// The producer's roles, the rings and the tile walk: backward_ws_pipeline.cuh.
#pragma once

#include "attention/backward/dq_turns.cuh"
#include "attention/backward/sm90/backward_fragments.cuh"
#include "attention/backward/sm90/backward_split_sums.cuh"
#include "attention/backward/sm90/backward_step.cuh"
#include "attention/backward/sm90/backward_ws_descriptors.cuh"
#include "attention/backward/sm90/backward_ws_pipeline.cuh"
#include "attention/backward/sm90/backward_ws_traits.cuh"
#include "common/element.cuh"
#include "common/sm90/wgmma.cuh"
#include "common/sm90/wgmma_any_n.cuh"

namespace swr {
namespace attention {
namespace sm90 {

using swr::sm90::fence_floats;
using swr::sm90::fence_words;

// The consumers and the dQ writer meet on a pair of named barriers a consumer warpgroup
// (barrier_id::kDqFull0 + wg, kDqEmpty0 + wg: the warpgroup's 128 threads and the writer's 32), and
// nothing else passes between them: the writer walks the tiles and steps itself, so that each side
// reads only what the barriers order (compute-sanitizer's racecheck does not follow fields handed
// over by bar.arrive then bar.sync). Against mbarriers and hand-over fields (H100, 14 variants):
// 0.958-0.970x the time in the deterministic mode, 0.968-0.999x with lagged consumers, 0.960x at
// B4 H32 S4096 D64 causal, the rest 0.991-1.010x.
constexpr int kDqHandOverThreads = 128 + 32;

// The dQ writer's warp: for each step of the CTA's walk, in the walk's order, once a consumer
// warpgroup has left its part of the step's dQ in shared memory, one bulk reduction adds the
// part into the workspace's accumulator (whose Q tile block has the buffer's layout), and the
// buffer is handed back once the reduction has read it. The warpgroups' parts of a step are
// taken in turn, consumer 0's first. In the deterministic mode a K/V tile adds both parts once the
// tiles before it have added theirs. The warp's first lane does the work; the others follow its
// loop.
template <class T>
__device__ __forceinline__ void write_dq(const BackwardWsTiles<T>& tiles,
                                         const BackwardArgs& args) {
  using namespace swr::sm90;
  const bool leader = threadIdx.x % 32 == 0;
  constexpr int kPartFloats = T::DqLayout::kWarpgroupFloats;
  // Consumer wg's part of a step into the accumulator's block of its Q tile (the leader's).
  const auto add_part = [&](float* block, int wg) {
    bulk_reduce_add_f32(block + wg * kPartFloats, tiles.dq() + wg * kPartFloats * 4,
                        kPartFloats * 4);
  };
  backward_ws_tiles<T>(tiles.barriers(), args, [&](int linear, int round) {
    const BackwardWsTile tile = backward_ws_tile<T>(linear, args);
    if (tile.steps == 0) return;
    const BackwardPositions walk = backward_ws_walk<T>(tile, round);
#pragma unroll 1
    for (int index = walk.first;; index += walk.stride) {
      // Where the step's dQ goes and, in the deterministic mode, the wait for the K/V tile's turn,
      // while the consumers still compute it: neither is on the path from a hand-over to the
      // buffer's return.
      const BackwardWsStep at = backward_ws_step<T>(tile, index, args);
      // The Q tile's block of the accumulator (dq_accum_offset, in 32-bit rows: the producer
      // warpgroup's registers).
      float* const block =
          args.workspace.dq_accum +
          static_cast<unsigned long long>(backward_ws_list_row<T>(tile, at, args)) * T::kHeadDim;
      if constexpr (T::kDeterministicDq) {
        int* const semaphore =
            dq_semaphore(args, tile.batch, at.head, at.q_row0 / T::kBlockM, args.q_tiles);
        if (leader) {
          spin_until_dq_turn(semaphore, tile.kv_tile);
          fence_proxy_async_global();
        }
        // Both parts, then one wait for both reductions to land before the next K/V tile may add:
        // the turn's hold on the Q tile is one round trip, not two.
#pragma unroll
        for (int wg = 0; wg < T::kConsumerWgs; ++wg)
          named_barrier_sync(barrier_id::kDqFull0 + wg, kDqHandOverThreads);
        if (leader) {
#pragma unroll
          for (int wg = 0; wg < T::kConsumerWgs; ++wg) add_part(block, wg);
          tma_store_commit();
          tma_store_wait<0>();
          fence_proxy_async_global();
          __threadfence();
          atomicAdd(semaphore, 1);
        }
        __syncwarp();
#pragma unroll
        for (int wg = 0; wg < T::kConsumerWgs; ++wg)
          named_barrier_arrive(barrier_id::kDqEmpty0 + wg, kDqHandOverThreads);
      } else {
#pragma unroll
        for (int wg = 0; wg < T::kConsumerWgs; ++wg) {
          named_barrier_sync(barrier_id::kDqFull0 + wg, kDqHandOverThreads);
          if (leader) {
            add_part(block, wg);
            tma_store_commit();
            tma_store_wait_read<0>();
          }
          __syncwarp();
          named_barrier_arrive(barrier_id::kDqEmpty0 + wg, kDqHandOverThreads);
        }
      }
      if (index == walk.last) break;
    }
  });
  if (leader) tma_store_wait<0>();
}

template <class T>
__device__ __forceinline__ void consume(const BackwardWsTiles<T>& tiles, void* dk, void* dv,
                                        const BackwardArgs& args) {
  using namespace swr::sm90;
  constexpr int kScoreRegs = T::kBlockM / 2;  // S^T and dP^T: m64 x BlockM
  constexpr int kPackedRegs = T::kBlockM / 4;
  constexpr int kAccumRegs = T::kHeadDim / 2;  // dK and dV: m64 x HeadDim
  constexpr int kDqRegs = T::kDqRegisters;
  BackwardWsBarriers<T>& bars = tiles.barriers();
  const int wg = warpgroup_index() - 1;
  const WarpgroupLane at{static_cast<int>(threadIdx.x % 128) / 32,
                         static_cast<int>(threadIdx.x % 32)};
  const int wg_row0 = wg * 64;  // this warpgroup's K/V rows within the tile
  // Its part of dQ: 64 rows, or a 64-column-aligned share of the columns.
  const int dq_row0 = T::dq_row0(wg);
  const int dq_column0 = T::dq_column0(wg);

  PipelineState<1> kv_state;
  PipelineState<T::kStages> state;  // of the Q and the dO ring alike
  // The dS^T slots: the one this step writes, and (lagged) the one whose dQ it computes.
  PipelineState<T::kDsStages> ds_written, ds_read;
  static_assert(T::kDsStages == 2, "as many dS^T slots as BackwardWsBarriers::ds_slots has");
  unsigned dq_hand_overs = 0;
  const BackwardWsDescriptors<T> descriptors(tiles, wg_row0, dq_row0, dq_column0);

  // A step's dQ rows into this warpgroup's buffer, once the writer has read the last ones (the
  // writer hands a buffer back after each of its reductions); hand_over_dq then tells the writer.
  const int dq_full = barrier_id::kDqFull0 + wg;
  const int dq_empty = barrier_id::kDqEmpty0 + wg;
  const auto store_dq = [&](const float* dq) {
    if (dq_hand_overs > 0) named_barrier_sync(dq_empty, kDqHandOverThreads);
    // DqFragmentLayout: registers 4j..4j+3 of this thread at float 4 (128 j + thread).
    float4* dq_buffer = reinterpret_cast<float4*>(tiles.dq()) +
                        wg * (T::DqLayout::kWarpgroupFloats / 4) + threadIdx.x % 128;
#pragma unroll
    for (int j = 0; j < kDqRegs / 4; ++j)
      dq_buffer[128 * j] = make_float4(dq[4 * j], dq[4 * j + 1], dq[4 * j + 2], dq[4 * j + 3]);
  };
  const auto hand_over_dq = [&] {
    fence_proxy_async_shared();  // the writer's bulk reduction reads dQ (async proxy)
    named_barrier_arrive(dq_full, kDqHandOverThreads);
    ++dq_hand_overs;
  };
  // Or (T::kDqFromRegisters) this warpgroup's part of a step's dQ straight from its registers into
  // the accumulator's block of the step's Q tile, each thread's 16 bytes where DqFragmentLayout
  // puts them (a warp's requests cover 512 contiguous bytes).
  const auto add_dq = [&](const float* dq, const BackwardWsTile& tile, const BackwardWsStep& of) {
    float* const part =
        args.workspace.dq_accum +
        static_cast<unsigned long long>(backward_ws_list_row<T>(tile, of, args)) * T::kHeadDim +
        wg * T::DqLayout::kWarpgroupFloats + 4 * (threadIdx.x % 128);
#pragma unroll
    for (int j = 0; j < kDqRegs / 4; ++j) {
      const float four[4] = {dq[4 * j], dq[4 * j + 1], dq[4 * j + 2], dq[4 * j + 3]};
      reduce_add_four(part + 512 * j, four);
    }
  };
  // The step whose dQ a lagged step computes: the last one.
  BackwardWsStep last_step{0, 0};
  // Lagged: this warpgroup's dQ has read the oldest written slot.
  const auto release_read_slot = [&] {
    bars.ds_slots.consumer_release(ds_read.index);
    ds_read.advance();
  };

  backward_ws_tiles<T>(bars, args, [&](int linear, int) {
    const BackwardWsTile tile = backward_ws_tile<T>(linear, args);
    const int kv_row0 = tile.kv_tile * T::kBlockN;
    float dk_acc[kAccumRegs], dv_acc[kAccumRegs];
#pragma unroll
    for (int i = 0; i < kAccumRegs; ++i) {
      dk_acc[i] = 0.f;
      dv_acc[i] = 0.f;
    }
    if (tile.steps > 0) bars.kv.consumer_wait(kv_state);
#pragma unroll 1
    for (int step = 0; step < tile.steps; ++step) {
      const int slot = state.index;

      // S^T = K Q^T and dP^T = V dO^T: K-major both, k16 steps of 32 bytes in a chunk.
      float s[kScoreRegs], dp[kScoreRegs];
      bars.q.consumer_wait(state);
      const BackwardWsStep this_step = bars.steps[slot];
      const int q_row0 = this_step.q_row0;
      // This thread's columns of L, read before the products are issued so that the loads are
      // in by the time S^T is; the rest just before each is used. At 128 Q rows a step all 16
      // column blocks spilled; 14 do not, and measured 1.6-1.7% faster on the H100 without the
      // causal mask (read late, the exponentials waited on the loads), 0.5-1.4% slower with it:
      // there the reads stay late. At 80 Q rows all 10 read early measured 1.1-1.8% faster
      // without the mask at S 4096 and 32768 (H100), and with it 1.1-2.0% faster than late reads
      // at S 16384 and 32768 on the H200 (bench/results/attention-backward-ws-h200/
      // early-lse-2026-11-28; the same change at 128 Q rows measured 3-5% slower there).
      const auto lse_at = [&](int j) {
        return *reinterpret_cast<const float2*>(tiles.lse_log2(slot) + at.column(j, 0));
      };
      constexpr int kEarlyLse = T::kBlockM == 64 ? 8 : T::kBlockM == 80 ? 10 : T::kCausal ? 0 : 14;
      float2 lse[kEarlyLse > 0 ? kEarlyLse : 1];
#pragma unroll
      for (int j = 0; j < kEarlyLse; ++j) lse[j] = lse_at(j);
      wgmma_fence();
      issue_transposed_scores<T>(s, descriptors.scores_kv(false),
                                 descriptors.scores_q(false, slot));
      bars.d_o.consumer_wait(state);
      wgmma_fence();
      issue_transposed_scores<T>(dp, descriptors.scores_kv(true), descriptors.scores_q(true, slot));
      wgmma_wait<1>();
      fence_floats<kScoreRegs>(s);

      // P^T.
      exponentiate_scores<T>(
          s, [&](int j) { return j < kEarlyLse ? lse[j] : lse_at(j); }, at,
          q_row0 + args.causal_shift - kv_row0 - wg_row0, args.seq_kv - kv_row0 - wg_row0,
          args.scale_log2);
      unsigned p_packed[kPackedRegs];
      pack_scores<T>(s, p_packed);
      // With 64 Q rows a step, delta is read while dP^T runs, as L was (at 128 its 32 more
      // registers do not fit beside P^T, dP^T, dK and dV).
      constexpr int kEarlyDelta = T::kBlockM == 64 ? T::kBlockM / 8 : 1;
      const auto delta_at = [&](int j) {
        return *reinterpret_cast<const float2*>(tiles.delta(slot) + at.column(j, 0));
      };
      float2 delta[kEarlyDelta];
      if constexpr (T::kBlockM == 64) {
#pragma unroll
        for (int j = 0; j < T::kBlockM / 8; ++j) delta[j] = delta_at(j);
      }
      // P^T is formed before the wait (the compiler would sink part of it past the wait, into the
      // stretch where the tensor cores have nothing of this warpgroup's to run); with 128 Q rows
      // a step, pinning it spilled; at 80, pinned measured 0.999-1.011x (H100), so it is not.
      if constexpr (T::kBlockM == 64) fence_words<kPackedRegs>(p_packed);
      wgmma_wait<0>();  // dP^T is in
      fence_floats<kScoreRegs>(dp);

      // dS^T = P^T o (dP^T - delta), packed, into this step's slot of the shared tile; P^T in
      // fp32 (unpacking its 16-bit form instead, as this kernel did at 128 Q rows a step to spare
      // registers, took 64 more instructions a step).
      unsigned ds_packed[kPackedRegs];
      transposed_ds<T>(
          [&](int j, int h) { return make_float2(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]); }, dp,
          [&](int j) {
            if constexpr (T::kBlockM != 64) {
              return delta_at(j);
            } else {
              return delta[j];
            }
          },
          ds_packed);
      // Lagged: once both warpgroups' dQ of two steps ago has read the slot. In lockstep each
      // warpgroup waited for that dQ before the last barrier.
      if constexpr (T::kLaggedDq) bars.ds_slots.producer_acquire(ds_written);
      unsigned char* ds_tile = tiles.ds(ds_written.index);
      store_ds<T>(ds_packed, ds_tile, wg_row0, at);
      // dV += P^T dO while the other warpgroup finishes its dS^T (issued after dS^T: measured
      // 6% faster on the H200 than issuing it before the pointwise dS^T).
      wgmma_fence();
      issue_register_product<T>(dv_acc, p_packed, descriptors.register_product(true, slot));
      fence_proxy_async_shared();  // dS^T's rows are visible to wgmma
      // The dS^T that dQ = dS K reads. Lockstep: this step's, once both warpgroups have stored
      // theirs (a barrier of the consumers). Lagged: the last step's, which both stored a step
      // ago, so that neither waits for the other's this step; a tile's first step has no last
      // one, and its product runs on K in place of dS^T and is dropped (a wgmma under a branch
      // made ptxas serialize every wgmma of the kernel).
      int dq_ds_slot = ds_written.index;
      bool k_in_place_of_ds = false;
      if constexpr (T::kLaggedDq) {
        mbarrier_arrive(&bars.ds_slots.full[ds_written.index]);
        if (step > 0) bars.ds_slots.consumer_wait(ds_read);
        dq_ds_slot = ds_read.index;
        k_in_place_of_ds = step == 0;
      } else {
        named_barrier_sync(barrier_id::kConsumers, T::kConsumerThreads);
      }
      ds_written.advance();

      // dQ, then dK += dS^T Q.
      float dq[kDqRegs];
      wgmma_fence();
      issue_dq<T>(dq, descriptors.dq_ds(dq_ds_slot, k_in_place_of_ds), descriptors.dq_k());
      issue_register_product<T>(dk_acc, ds_packed, descriptors.register_product(false, slot));
      wgmma_wait<1>();  // dV and dQ are in (dK may still run)
      fence_floats<kDqRegs>(dq);
      fence_floats<kAccumRegs>(dv_acc);
      fence_words<kPackedRegs>(p_packed);
      release_shared_slot<T>(bars.d_o, slot);  // dO and delta are read
      const bool dq_of_a_step = !T::kLaggedDq || step > 0;
      if (dq_of_a_step) {
        if constexpr (T::kLaggedDq) release_read_slot();
        if constexpr (T::kDqFromRegisters) {
          add_dq(dq, tile, T::kLaggedDq ? last_step : this_step);
        } else {
          store_dq(dq);
        }
      }

      wgmma_wait<0>();  // dK, while the stores land
      fence_floats<kAccumRegs>(dk_acc);
      fence_words<kPackedRegs>(ds_packed);
      release_shared_slot<T>(bars.q, slot);  // Q and L are read
      if (!T::kDqFromRegisters && dq_of_a_step) hand_over_dq();
      last_step = this_step;
      state.advance();
    }
    if (tile.steps > 0) {
      if constexpr (T::kLaggedDq) {
        // The tile's last dQ, before K is handed back.
        float dq[kDqRegs];
        bars.ds_slots.consumer_wait(ds_read);
        wgmma_fence();
        issue_dq<T>(dq, descriptors.dq_ds(ds_read.index), descriptors.dq_k());
        wgmma_wait<0>();
        fence_floats<kDqRegs>(dq);
        release_read_slot();
        if constexpr (T::kDqFromRegisters) {
          add_dq(dq, tile, last_step);
        } else {
          store_dq(dq);
          hand_over_dq();
        }
      }
      mbarrier_arrive(&bars.kv.empty[0]);  // every product reading K and V has completed
      kv_state.advance();
    }

    // A split part's dK and dV are summed over the parts; the last to arrive stores them.
    if constexpr (T::kSplitsLastWave) {
      if (tile.split_slot >= 0 && !sum_split_parts<T>(dk_acc, dv_acc, tile.split_slot, wg, args))
        return;
    }
    const int first_row = kv_row0 + wg_row0;
    store_rows<T>(
        dk_acc, args.scale,
        static_cast<unsigned short*>(dk) + row_offset(args.dk, tile.batch, tile.kv_head, 0),
        args.dk.seq, first_row, args.seq_kv, at);
    store_rows<T>(
        dv_acc, 1.f,
        static_cast<unsigned short*>(dv) + row_offset(args.dv, tile.batch, tile.kv_head, 0),
        args.dv.seq, first_row, args.seq_kv, at);
  });
  // The writer's hand-back of the last buffer, so that every arrival on the barriers is met.
  if (dq_hand_overs > 0) named_barrier_sync(dq_empty, kDqHandOverThreads);
}

// The consumers' tiles: under static or dynamic persistence, at a base the compiler cannot trace
// back to the CTA's shared window. Left to itself, it derived the base again at every step (an
// S2UR of SR_CgaCtaId at the step loop's head and 13 more instructions in the D64 loop, 559
// against the grid's 546), and those variants ran 2-3% slower on the H200
// (bench/results/attention-backward-ws-h200/opaque-base-2026-11-29). The base goes through a
// shuffle as a 32-bit shared address, so that the compiler still knows it for shared memory (LDS
// and STS, not generic loads) and keeps it in a uniform register. Grid persistence's loops have
// no such S2UR; there the shuffle saved nothing measurable and lengthened the causal `-lag-red`
// loop (564 to 583), so they take the tiles as they are.
template <class T>
__device__ __forceinline__ BackwardWsTiles<T> consumer_tiles(const BackwardWsTiles<T>& tiles) {
  if constexpr (T::kPersistence == Persistence::grid) {
    return tiles;
  } else {
    const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(tiles.base));
    return {static_cast<unsigned char*>(__cvta_shared_to_generic(__shfl_sync(~0u, base, 0)))};
  }
}

// dk, dv at args' strides; Q, K, V, dO through their tensor maps; the workspace filled by the
// preprocess. Launch: kThreads threads, kSharedBytes of dynamic shared memory.
template <class T>
__device__ __forceinline__ void backward_ws(const TmaDescriptor* q_map, const TmaDescriptor* k_map,
                                            const TmaDescriptor* v_map,
                                            const TmaDescriptor* d_o_map, void* dk, void* dv,
                                            const BackwardArgs& args) {
  extern __shared__ __align__(1024) unsigned char shared_memory[];
  const BackwardWsTiles<T> tiles{swr::sm90::align_shared<1024>(shared_memory)};
  run_backward_ws<T>(
      q_map, k_map, v_map, d_o_map, tiles, args,
      [&] {
        if constexpr (!T::kDqFromRegisters) write_dq<T>(tiles, args);
      },
      [&] { consume<T>(consumer_tiles<T>(tiles), dk, dv, args); });
}

}  // namespace sm90
}  // namespace attention
}  // namespace swr
