// Warp-specialized attention forward for sm_90a: warpgroup 0 is the producer (one thread issues
// the TMA loads of Q, once per tile, and of K and V into two Stages-deep full/empty mbarrier
// rings), warpgroups 1..ConsumerWgs each own 64 rows of the Q tile: S = Q K^T with wgmma SS,
// online softmax in registers, O += P V with wgmma RS (P packed from the S accumulators) or SS
// (P stored to shared memory, kPInSharedMemory).
// The schedule is the mma.sync kernel's: tile_coord + the persistence rules pick the tiles
// (role_tiles.cuh: for dynamic persistence the producer claims them and hands them over), and
// both roles walk K/V in kv_tile_at(step, kv_tiles, round) order (each role keeps its own count,
// so they agree without talking); masking keys on the K/V block index, never on the step.
//
// Tensor maps (cuTensorMapEncodeTiled, 16-bit elements, swizzle of Traits::kSwizzleBytes, OOB
// fill zero; runtime/attention_tensor_maps.hpp), rank 4 over each tensor's own strides:
//   q_map: dims {HeadDim, seq_q, heads, batch}, box {kChunkColumns, BlockM, 1, 1}
//   k_map, v_map: dims {HeadDim, seq_kv, kv_heads, batch}, box {kChunkColumns, BlockN, 1, 1}
// so a box never reads another head's rows; rows past seq are zero-filled (and masked with -inf).
// O is written from registers at args.o's strides (ConsumerRows::store).
#pragma once

#include "attention/attention_args.cuh"
#include "attention/attention_schedule.cuh"
#include "attention/sm90/consumer_rows.cuh"
#include "attention/sm90/role_tiles.cuh"
#include "attention/sm90/traits.cuh"
#include "common/sm90/mbarrier.cuh"
#include "common/sm90/pipeline.cuh"
#include "common/sm90/tma.cuh"
#include "common/sm90/warpgroup.cuh"
#include "common/sm90/wgmma.cuh"
#include "common/sm90/wgmma_any_n.cuh"

namespace swr {
namespace attention {
namespace sm90 {

using swr::sm90::PipelineBarriers;
using swr::sm90::PipelineState;
using swr::sm90::TmaDescriptor;

template <class T>
struct SharedStorage {
  PipelineBarriers<1> q;
  PipelineBarriers<T::kStages> k;
  PipelineBarriers<T::kStages> v;
  TileQueue queue;  // dynamic persistence only
};

// Arrivals on an "empty" barrier: lane 0 of every consumer warp, after its wgmma wait.
template <class T>
constexpr unsigned kConsumerArrivals = 4 * T::kConsumerWgs;

// Where a tile's rows lie: its (batch, query head) and the K/V head that query head reads.
struct TileHeads {
  int batch;
  int head;
  int kv_head;
};
__device__ __forceinline__ TileHeads tile_heads(const TileCoord& coord, const AttentionArgs& args) {
  TileHeads heads;
  heads.batch = coord.batch_head / args.heads;
  heads.head = coord.batch_head - heads.batch * args.heads;
  heads.kv_head = kv_head_of(heads.head, args.heads, args.kv_heads);
  return heads;
}

// One tile of rows [row, row + rows) of (batch, head), as kChunks boxes of kChunkColumns.
template <class T>
__device__ __forceinline__ void load_tile(unsigned char* dst, const TmaDescriptor* map,
                                          unsigned long long* bar, int row, int head, int batch,
                                          int chunk_bytes, bool kv) {
#pragma unroll
  for (int c = 0; c < T::kChunks; ++c) {
    const int column = c * T::kChunkColumns;
    if (kv && T::kHint == KvCacheHint::evict_last) {
      swr::sm90::tma_load_4d_hint(dst + c * chunk_bytes, map, bar, column, row, head, batch,
                                  swr::sm90::kCacheEvictLast);
    } else {
      swr::sm90::tma_load_4d(dst + c * chunk_bytes, map, bar, column, row, head, batch);
    }
  }
}

// A Q tile whose rows see no key (bottom-right causal with seq_q > seq_kv) reads nothing: both
// roles skip its loads and waits alike, and its rows of O are written as 0.
template <class T>
__device__ __forceinline__ int kv_tiles_of(const TileCoord& coord, const AttentionArgs& args) {
  return kv_tiles_of_q_tile(T::kCausal, coord.q_tile, T::kBlockM, T::kBlockN, args.seq_q,
                            args.seq_kv, args.causal_shift);
}

template <class T>
__device__ __forceinline__ void produce(const TmaDescriptor* q_map, const TmaDescriptor* k_map,
                                        const TmaDescriptor* v_map, unsigned char* tiles,
                                        SharedStorage<T>& bars, const AttentionArgs& args) {
  if constexpr (T::kPlantedHang) return;  // test-only: the consumers wait forever on an mbarrier
  unsigned char* q_tile = tiles;
  unsigned char* k_tiles = tiles + T::kQBytes;
  unsigned char* v_tiles = k_tiles + T::kStages * T::kKvBytes;
  PipelineState<1> q_state;
  PipelineState<T::kStages> k_state, v_state;
  const int q_tiles = (args.seq_q + T::kBlockM - 1) / T::kBlockM;
  const int batch_heads = args.batch * args.heads;
  producer_tiles<T::kPersistence>(
      q_tiles * batch_heads, args.tile_counter, args.wave_size, bars.queue,
      [&](int linear_tile, int round) {
        const TileCoord coord =
            tile_coord(T::kSwizzle, T::kHeadGroup, T::kCausal, linear_tile, q_tiles, batch_heads);
        const int kv_tiles = kv_tiles_of<T>(coord, args);
        if (kv_tiles == 0) return;
        const TileHeads heads = tile_heads(coord, args);
        bars.q.producer_acquire(q_state);
        swr::sm90::mbarrier_arrive_expect_tx(&bars.q.full[0], T::kQBytes);
        load_tile<T>(q_tile, q_map, &bars.q.full[0], coord.q_tile * T::kBlockM, heads.head,
                     heads.batch, T::kQChunkBytes, false);
        q_state.advance();
        for (int step = 0; step < kv_tiles; ++step) {
          const int kv_row0 = kv_tile_at(T::kOrder, step, kv_tiles, round) * T::kBlockN;
          bars.k.producer_acquire(k_state);
          swr::sm90::mbarrier_arrive_expect_tx(&bars.k.full[k_state.index], T::kKvBytes);
          load_tile<T>(k_tiles + k_state.index * T::kKvBytes, k_map, &bars.k.full[k_state.index],
                       kv_row0, heads.kv_head, heads.batch, T::kKvChunkBytes, true);
          k_state.advance();
          bars.v.producer_acquire(v_state);
          swr::sm90::mbarrier_arrive_expect_tx(&bars.v.full[v_state.index], T::kKvBytes);
          load_tile<T>(v_tiles + v_state.index * T::kKvBytes, v_map, &bars.v.full[v_state.index],
                       kv_row0, heads.kv_head, heads.batch, T::kKvChunkBytes, true);
          v_state.advance();
        }
      });
}

using swr::sm90::fence_floats;
using swr::sm90::fence_words;

// A bool as a type, so that a generic lambda can take it and compile a copy for each value.
template <bool Value>
struct CompileTimeFlag {
  static constexpr bool value = Value;
};

template <class T>
__device__ __forceinline__ void consume(unsigned char* tiles, SharedStorage<T>& bars,
                                        unsigned short* o, const AttentionArgs& args, float* lse) {
  using Rows = ConsumerRows<T>;
  constexpr int kS = Rows::kScoreRegs;
  constexpr int kO = Rows::kOutputRegs;
  constexpr int kP = Rows::kPRegs;
  unsigned char* q_tile = tiles;
  unsigned char* k_tiles = tiles + T::kQBytes;
  unsigned char* v_tiles = k_tiles + T::kStages * T::kKvBytes;

  const int wg = swr::sm90::warpgroup_index() - 1;
  // SS form: this warpgroup's P tile, and the named barrier its four warps meet at once each has
  // stored its rows of P.
  unsigned char* p_tile = tiles + T::kPOffset + wg * T::kPBytesPerWarpgroup;
  const int p_barrier = wg == 0   ? swr::sm90::barrier_id::kConsumer0
                        : wg == 1 ? swr::sm90::barrier_id::kConsumer1
                                  : swr::sm90::barrier_id::kConsumer2;
  const int thread = threadIdx.x % 128;
  const bool warp_leader = thread % 32 == 0;
  Rows rows;
  rows.lane = thread % 32;
  rows.first_row = wg * 64 + (thread / 32) * 16;
  float s[kS];
  float out[kO];
  unsigned p[kP];

  // Pingpong: a warpgroup issues its GEMMs only while it holds the token (its order barrier),
  // and hands the token to the next one (in turn, of two or three) right after issuing them, so
  // that the tensor cores run one warpgroup's S (and PV) at a time and its softmax starts early.
  const int own_barrier = swr::sm90::barrier_id::order_consumer(wg);
  const int next_barrier = swr::sm90::barrier_id::order_consumer((wg + 1) % T::kConsumerWgs);
  auto order_sync = [&]() {
    if constexpr (T::kPingpong) swr::sm90::named_barrier_sync(own_barrier, 256);
  };
  auto order_arrive = [&]() {
    if constexpr (T::kPingpong) swr::sm90::named_barrier_arrive(next_barrier, 256);
  };
  if constexpr (T::kPingpong) {
    if (wg == T::kConsumerWgs - 1) order_arrive();  // WG 0 goes first
  }

  // S = Q K^T for this warpgroup's 64 rows (A: Q rows wg*64.., K-major; B: K tile, K-major).
  // Each k16 step reads 32 bytes of a row: chunk kk / kSteps, at (kk % kSteps) * 32 in it.
  constexpr int kStepsPerChunk = T::kChunkColumns / 16;
  // The descriptors are made once a product and advanced by constant offsets, so that issuing
  // the wgmma takes no address arithmetic beyond one add each (the backward's products do the
  // same).
  auto issue_s = [&](int slot) {
    const unsigned long long q_desc =
        swr::sm90::make_desc_kmajor<T::kSwizzleBytes>(q_tile + wg * 64 * T::kSwizzleBytes);
    const unsigned long long k_desc =
        swr::sm90::make_desc_kmajor<T::kSwizzleBytes>(k_tiles + slot * T::kKvBytes);
    fence_floats<kS>(s);
    swr::sm90::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < T::kHeadDim / 16; ++kk) {
      const int chunk = kk / kStepsPerChunk;
      const int offset = (kk % kStepsPerChunk) * 32;
      const unsigned long long da =
          swr::sm90::advance_desc(q_desc, chunk * T::kQChunkBytes + offset);
      const unsigned long long db =
          swr::sm90::advance_desc(k_desc, chunk * T::kKvChunkBytes + offset);
      swr::sm90::wgmma_ss_n<T::kBlockN, T::kElement, 0>(s, da, db, kk > 0 ? 1 : 0);
    }
    swr::sm90::wgmma_commit();
    fence_floats<kS>(s);
  };
  // O += P V (A: P in registers, or this warpgroup's P tile, K-major like Q; B: V tile
  // [keys][HeadDim] is MN-major: kChunkColumns-wide chunks of BlockN rows, LBO = chunk stride,
  // SBO = 8 rows, k16 step = 16 rows).
  auto issue_pv = [&](int slot) {
    const unsigned long long v_desc = swr::sm90::make_desc_mnmajor<T::kSwizzleBytes>(
        v_tiles + slot * T::kKvBytes, T::kKvChunkBytes);
    const unsigned long long p_desc = swr::sm90::make_desc_kmajor_sw128(p_tile);
    if constexpr (T::kPInSharedMemory) {
      swr::sm90::named_barrier_sync(p_barrier, 128);  // all four warps' rows of P are stored
    } else {
      fence_words<kP>(p);
    }
    fence_floats<kO>(out);
    swr::sm90::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < T::kBlockN / 16; ++kk) {
      const unsigned long long db = swr::sm90::advance_desc(v_desc, kk * 16 * T::kSwizzleBytes);
      if constexpr (T::kPInSharedMemory) {
        const unsigned long long da =
            swr::sm90::advance_desc(p_desc, (kk / 4) * T::kPChunkBytes + (kk % 4) * 32);
        swr::sm90::wgmma_ss_n<T::kHeadDim, T::kElement, 1>(out, da, db, 1);
      } else {
        swr::sm90::wgmma_rs_n<T::kHeadDim, T::kElement, 1>(out, p + 4 * kk, db, 1);
      }
    }
    swr::sm90::wgmma_commit();
    fence_floats<kO>(out);
  };
  // P of this step as the PV wgmma's A operand. In shared memory, only once the previous PV
  // wgmma (which reads the same P tile) has completed: every caller has waited for it.
  auto stage_p = [&]() {
    if constexpr (T::kPInSharedMemory) {
      rows.store_p(s, p_tile);
    } else {
      Rows::pack_p(s, p);
    }
  };
  auto release = [&](unsigned long long* empty) {
    __syncwarp();
    if (warp_leader) swr::sm90::mbarrier_arrive(empty);
  };

  const int seq_kv = args.seq_kv;
  const int causal_shift = args.causal_shift;
  const float scale_log2 = args.scale_log2;
  PipelineState<1> q_state;
  PipelineState<T::kStages> k_state, v_state;
  const int q_tiles = (args.seq_q + T::kBlockM - 1) / T::kBlockM;
  const int batch_heads = args.batch * args.heads;
  consumer_tiles<T::kPersistence>(
      q_tiles * batch_heads, args.tile_counter, args.wave_size, bars.queue,
      [&](int linear_tile, int round) {
        const TileCoord coord =
            tile_coord(T::kSwizzle, T::kHeadGroup, T::kCausal, linear_tile, q_tiles, batch_heads);
        const int q_row0 = coord.q_tile * T::kBlockM;
        const int kv_tiles = kv_tiles_of<T>(coord, args);
        const TileHeads heads = tile_heads(coord, args);
        unsigned short* o_head = o + row_offset(args.o, heads.batch, heads.head, 0);
        rows.start(out);
        // No row of the tile sees a key: nothing was loaded, O is written 0 (l = 0).
        if (kv_tiles > 0) {
          bars.q.consumer_wait(q_state);

          // Overlapped kernels walk a tile no key mask touches (no causal mask, seq_kv a multiple
          // of BlockN) in a copy of the steps without the masking code: the per-step test was a
          // taken branch over ~130 instructions whose target stalled instruction fetch (D64 step
          // loop 574 -> 439 instructions). The other kernels keep one walk: with the copy, the
          // three-warpgroup D128 kernel ran 1.2-1.7% slower on the H200.
          const auto walk = [&](auto masked) {
            // Once a step's S is in: K's slot handed back (and Q's after the tile's last step),
            // then the keys masked where this copy masks.
            const auto scores_in = [&](int step, int kv_col0) {
              fence_floats<kS>(s);
              release(&bars.k.empty[k_state.index]);
              k_state.advance();
              if (step == kv_tiles - 1) release(&bars.q.empty[0]);
              if constexpr (decltype(masked)::value)
                rows.mask(s, q_row0, kv_col0, seq_kv, causal_shift);
            };
            // A step's S issued and waited for alone: every step of the plain walk, step 0 of the
            // overlapped one.
            const auto scores_alone = [&](int step) {
              const int kv_col0 = kv_tile_at(T::kOrder, step, kv_tiles, round) * T::kBlockN;
              bars.k.consumer_wait(k_state);
              order_sync();
              issue_s(k_state.index);
              order_arrive();
              swr::sm90::wgmma_wait<0>();
              scores_in(step, kv_col0);
            };
            if constexpr (!T::kIntraWgOverlap) {
              for (int step = 0; step < kv_tiles; ++step) {
                scores_alone(step);
                float rescale[2];
                if (rows.softmax(s, scale_log2, rescale)) Rows::rescale_output(out, rescale);
                stage_p();
                bars.v.consumer_wait(v_state);
                issue_pv(v_state.index);
                swr::sm90::wgmma_wait<0>();
                fence_floats<kO>(out);
                release(&bars.v.empty[v_state.index]);
                v_state.advance();
              }
            } else {
              // Step 0: S(0) alone.
              {
                scores_alone(0);
                float rescale[2];
                rows.softmax(s, scale_log2, rescale);  // O is still 0: nothing to rescale
                stage_p();
              }
              // Step j: issue S(j) and PV(j-1); softmax(j) runs while PV(j-1) is in flight.
              for (int step = 1; step < kv_tiles; ++step) {
                const int kv_col0 = kv_tile_at(T::kOrder, step, kv_tiles, round) * T::kBlockN;
                bars.k.consumer_wait(k_state);
                order_sync();
                issue_s(k_state.index);
                bars.v.consumer_wait(v_state);
                issue_pv(v_state.index);
                order_arrive();
                swr::sm90::wgmma_wait<1>();
                scores_in(step, kv_col0);
                float rescale[2];
                const bool moved = rows.softmax(s, scale_log2, rescale);
                // PV(j-1)'s wait, in both arms of a branch after the softmax: in the softmax's
                // block ptxas hoisted the wait above all but four of its instructions (the PTX had
                // it after them, and no empty asm fence holds ptxas), so that the softmax ran after
                // PV(j-1) instead of beside it. The arms split on the step's parity, the same in
                // every warp of the warpgroup: its warps must reach the wait at one pc (a warp's
                // own vote, `moved`, failed synccheck).
                if (step % 2) {
                  swr::sm90::wgmma_wait<0>();
                  fence_floats<kO>(out);
                } else {
                  swr::sm90::wgmma_wait<0>();
                  fence_floats<kO>(out);
                }
                if constexpr (!T::kPInSharedMemory) fence_words<kP>(p);
                release(&bars.v.empty[v_state.index]);
                v_state.advance();
                if (moved) Rows::rescale_output(out, rescale);
                stage_p();
              }
              bars.v.consumer_wait(v_state);
              issue_pv(v_state.index);
              swr::sm90::wgmma_wait<0>();
              fence_floats<kO>(out);
              release(&bars.v.empty[v_state.index]);
              v_state.advance();
            }
          };
          if constexpr (T::kIntraWgOverlap) {
            if (T::kCausal || seq_kv % T::kBlockN != 0) {
              walk(CompileTimeFlag<true>{});
            } else {
              walk(CompileTimeFlag<false>{});
            }
          } else {
            walk(CompileTimeFlag<true>{});
          }
          q_state.advance();
        }
        rows.store(out, o_head, args.o.seq, q_row0, args.seq_q,
                   lse == nullptr ? nullptr : lse + lse_row0(args, heads.batch, heads.head));
      });
}

// o: [batch, heads, seq_q, HeadDim] in the input dtype at args.o's strides; Q, K, V through their
// tensor maps (K and V over args.kv_heads heads; query head h reads kv_head_of(h)). scale_log2 =
// softmax_scale * log2(e); wave_size: CTAs resident at once (grid persistence: what the sawtooth
// order flips on); tile_counter: 0 at launch (dynamic persistence).
// Launch: kThreads threads, kDynamicSharedBytes of dynamic shared memory (opt-in attribute).
// lse: [batch, heads, seq_q] fp32 for the rows' log-sum-exp, or null (nothing more written).
template <class T>
__device__ __forceinline__ void forward(const TmaDescriptor* q_map, const TmaDescriptor* k_map,
                                        const TmaDescriptor* v_map, void* o,
                                        const AttentionArgs& args, float* lse) {
  extern __shared__ __align__(1024) unsigned char shared_memory[];
  unsigned char* tiles = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(shared_memory) + 1023) & ~1023ull);
  static_assert(sizeof(SharedStorage<T>) <= T::kBarrierBytes, "barriers outgrow their space");
  SharedStorage<T>& bars = *reinterpret_cast<SharedStorage<T>*>(tiles + T::kTileBytes);
  if (threadIdx.x == 0) {
    bars.q.init(1, kConsumerArrivals<T>);
    bars.k.init(1, kConsumerArrivals<T>);
    bars.v.init(1, kConsumerArrivals<T>);
    if constexpr (T::kPersistence == Persistence::dynamic) {
      bars.queue.init(128 * T::kConsumerWgs);  // every consumer thread pops every entry
    }
    swr::sm90::mbarrier_init_fence();
    swr::sm90::tma_prefetch_descriptor(q_map);
    swr::sm90::tma_prefetch_descriptor(k_map);
    swr::sm90::tma_prefetch_descriptor(v_map);
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    swr::sm90::warpgroup_reg_dealloc<T::kProducerRegisters>();
    if (threadIdx.x == 0) produce<T>(q_map, k_map, v_map, tiles, bars, args);
  } else {
    swr::sm90::warpgroup_reg_alloc<T::kConsumerRegisters>();
    consume<T>(tiles, bars, static_cast<unsigned short*>(o), args, lse);
  }
}

}  // namespace sm90
}  // namespace attention
}  // namespace swr
