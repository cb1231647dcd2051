// sm_90a GEMM: C = A · B, A [M x K], B [K x N], C [M x N] all row-major, fp16 or bf16 in and out,
// fp32 accumulation. Warp-specialized and persistent:
//   warpgroup 0   producer: one thread walks the tiles and issues TMA loads of A (K-major) and
//                 B (MN-major) into a `Stages`-deep full/empty mbarrier ring (setmaxnreg.dec);
//   warpgroups 1-2 consumers: wgmma m64nBNk16 from shared memory (setmaxnreg.inc), then the TMA
//                 store epilogue (gemm_epilogue_sm90.cuh). The producer runs ahead into the next
//                 tile while the consumers store, since the ring does not care about tile borders.
// Tile order: swr::gemm::tile_at(linear, tiles_m, tiles_n, axis, group) (block_swizzle.cuh), the
// same raster the mma.sync kernel uses; axis/group are launch arguments. A cluster walks cluster
// tiles (cluster_member_tile) and multicasts the operands its CTAs share: B down a cluster column
// (2x1), A along a cluster row (1x2), both in a 2x2 cluster. Stream-K
// (gemm/stream_k.cuh) walks items of a tile and a k range; a contributor's partial sums go
// through gemm_stream_k_sm90.cuh's scratch to the CTA that stores the tile.
// Tails: TMA zero-fills out-of-bounds loads (M, N and K tails), the TMA store clips.
// ProductOrder::bt_times_at (gemm_traits_sm90.cuh) runs the same kernel on C^T = B^T · A^T: its
// m, n are swr's N, M, the first operand (swr's B) arrives MN-major, the second (swr's A) K-major,
// and the epilogue writes the tile transposed into C.
// Entry (see generator/gemm_kernel_source.cpp for a rendered source): gemm_ws<Traits>(maps, m, n,
// k, swizzle_axis, swizzle_group, tile_counter) with __launch_bounds__(Traits::kThreads, 1).
#pragma once

#include "common/element.cuh"
#include "common/sm90/cluster.cuh"
#include "common/sm90/mbarrier.cuh"
#include "common/sm90/pipeline.cuh"
#include "common/sm90/tma.cuh"
#include "common/sm90/warpgroup.cuh"
#include "common/sm90/wgmma.cuh"
#include "common/sm90/wgmma_any_n.cuh"
#include "gemm/block_swizzle.cuh"
#include "gemm/sm90/gemm_epilogue_sm90.cuh"
#include "gemm/sm90/gemm_stream_k_sm90.cuh"
#include "gemm/sm90/gemm_traits_sm90.cuh"
#include "gemm/stream_k.cuh"

namespace swr {
namespace gemm {
namespace sm90 {

// A consumer's j-th tile entry is a linear tile index, or one of two end markers. Pingpong
// consumers take turns through named barriers; to leave no barrier half-arrived, the first end
// marker's owner still waits for its turn (kEndSync), the one after it does not (kEndQuiet).
constexpr int kEndSync = -1;
constexpr int kEndQuiet = -2;

// Static persistence: work unit `unit` of `units` (a CTA, or a cluster of CTAs) takes linear
// tiles unit, unit + units, ...
__device__ __forceinline__ int static_entry(int j, int tiles, int unit, int units) {
  const int linear = unit + j * units;
  if (linear < tiles) return linear;
  return linear - units < tiles ? kEndSync : kEndQuiet;
}

template <class T>
struct SharedPlan {
  unsigned char* base;  // 1024-byte aligned
  __device__ __forceinline__ unsigned char* a(int stage) const {
    return base + stage * T::kStageBytes;
  }
  __device__ __forceinline__ unsigned char* b(int stage) const { return a(stage) + T::kABytes; }
  __device__ __forceinline__ unsigned char* c(int consumer) const {
    return base + T::kCOffset + consumer * T::kCBytesPerConsumer;
  }
  __device__ __forceinline__ ::swr::sm90::PipelineBarriers<T::kStages>& pipe() const {
    return *reinterpret_cast<::swr::sm90::PipelineBarriers<T::kStages>*>(base + T::kBarrierOffset);
  }
  __device__ __forceinline__ unsigned long long* tile_full() const {
    return reinterpret_cast<unsigned long long*>(base + T::kBarrierOffset + 16 * T::kStages);
  }
  __device__ __forceinline__ unsigned long long* tile_empty() const {
    return tile_full() + T::kTileQueue;
  }
  __device__ __forceinline__ int* tile_ids() const {
    return reinterpret_cast<int*>(tile_empty() + T::kTileQueue);
  }
  // Stream-K has no tile queue: its unit's range lives in the queue's place, read where it is used
  // so that it holds no consumer registers next to the accumulators (ptxas spilled otherwise).
  __device__ __forceinline__ StreamKRange* stream_k_range() const {
    static_assert(sizeof(StreamKRange) <= 20 * T::kTileQueue, "fits the tile queue's bytes");
    return reinterpret_cast<StreamKRange*>(tile_full());
  }
};

template <class T>
struct Problem {
  int m, n, k;
  int tiles_m, tiles_n, k_blocks;
  int swizzle_axis, swizzle_group;
  // The raster walks cluster tiles: ClusterM output tiles stacked along M, or ClusterN side by
  // side along N (block_swizzle.cuh's cluster_member_tile).
  int cluster_tiles_m, cluster_tiles_n, tiles;
  int unit, units;  // this CTA's cluster and the number of clusters
  int rank;         // CTA rank in the cluster
  // Its place in the cluster: row (rank % ClusterM: which chunks of the shared B tile it loads),
  // column (rank / ClusterM: which rows of the shared A tile), and the multicast masks of both.
  int cluster_row, cluster_column;
  unsigned row_mask;         // the CTAs sharing this CTA's A tile (its cluster row)
  unsigned column_mask;      // those sharing its B tile (its cluster column)
  StreamKSchedule stream_k;  // stream-K persistence only
  // The CTAs that multicast into this CTA's ring slots, which its consumers release; a cluster
  // along one axis is one row or one column, all of it.
  __device__ __forceinline__ unsigned peers() const {
    if constexpr (T::kClusterM == 1 || T::kClusterN == 1) return (1u << T::kClusterSize) - 1u;
    return row_mask | column_mask;
  }
  __device__ __forceinline__ TileCoord coord(int linear) const {
    const TileCoord c =
        tile_at(linear, cluster_tiles_m, cluster_tiles_n, swizzle_axis, swizzle_group);
    return cluster_member_tile(c, T::kClusterM, T::kClusterN, rank);
  }
};

// ---- producer: one thread
// ------------------------------------------------------------------------
// One k block of a K-major operand tile ([rows][64 k] swizzled; box {64, rows / Sharers}): the
// CTA at place `place` of the Sharers CTAs that share the tile loads its rows and multicasts them
// to `mask`; the other places' rows complete it.
template <int Sharers, int ShareBytes, int BoxRows>
__device__ __forceinline__ void load_k_major(unsigned char* tile,
                                             const ::swr::sm90::TmaDescriptor* map,
                                             unsigned long long* full, int k, int row0, int place,
                                             unsigned mask) {
  using namespace ::swr::sm90;
  if constexpr (Sharers == 1) {
    tma_load_2d(tile, map, full, k, row0);
  } else {
    tma_load_2d_multicast(tile + place * ShareBytes, map, full, k, row0 + place * BoxRows,
                          static_cast<unsigned short>(mask));
  }
}

// One k block of an MN-major operand tile (Chunks chunks of [64 k][64 columns], ChunkBytes
// apart): the CTA at place `place` loads the chunks c with c % Sharers == place (128x192 tiles
// split 2 + 1).
template <int Sharers, int Chunks, int ChunkBytes>
__device__ __forceinline__ void load_mn_major(unsigned char* tile,
                                              const ::swr::sm90::TmaDescriptor* map,
                                              unsigned long long* full, int column0, int k,
                                              int place, unsigned mask) {
  using namespace ::swr::sm90;
#pragma unroll
  for (int chunk = 0; chunk < Chunks; ++chunk) {
    if constexpr (Sharers == 1) {
      tma_load_2d(tile + chunk * ChunkBytes, map, full, column0 + chunk * 64, k);
    } else {
      if (chunk % Sharers != place) continue;
      tma_load_2d_multicast(tile + chunk * ChunkBytes, map, full, column0 + chunk * 64, k,
                            static_cast<unsigned short>(mask));
    }
  }
}

template <class T>
__device__ __forceinline__ void produce(const SharedPlan<T>& plan, const Problem<T>& p,
                                        const ::swr::sm90::TmaDescriptor* map_a,
                                        const ::swr::sm90::TmaDescriptor* map_b,
                                        int* tile_counter) {
  using namespace ::swr::sm90;
  constexpr bool kDynamic = T::kPersistence == Persistence::dynamic_persistent;
  constexpr bool kPingpong = T::kMode == ConsumerMode::pingpong;
  PipelineBarriers<T::kStages>& pipe = plan.pipe();
  PipelineState<T::kStages> state;
  int claimed = static_cast<int>(blockIdx.x);
  for (int j = 0;; ++j) {
    int tile;
    int k_begin = 0, k_end = p.k_blocks;
    if constexpr (T::kPersistence == Persistence::stream_k) {
      StreamKItem item;
      if (!stream_k_item(p.stream_k, *plan.stream_k_range(), p.unit, j, item)) break;
      tile = item.tile;
      k_begin = item.k_begin;
      k_end = item.k_end;
    } else if constexpr (kDynamic) {
      tile = claimed < p.tiles ? claimed : kEndSync;
      // Hand the entry to the consumers through the tile queue (slot j % Q).
      for (int e = 0; e < (tile < 0 && kPingpong ? 2 : 1); ++e) {
        const int entry = j + e;
        const int slot = entry % T::kTileQueue;
        mbarrier_wait(&plan.tile_empty()[slot], ((entry / T::kTileQueue) & 1) ^ 1u);
        plan.tile_ids()[slot] = e == 0 ? tile : kEndQuiet;
        mbarrier_arrive(&plan.tile_full()[slot]);  // release: the id is visible to the waiters
      }
      if (tile < 0) break;
      // Claim the next tile now; its latency hides behind this tile's loads.
      claimed = static_cast<int>(gridDim.x) + atomicAdd(tile_counter, 1);
    } else {
      tile = static_entry(j, p.tiles, p.unit, p.units);
      if (tile < 0) break;
    }
    const TileCoord coord = p.coord(tile);
    const int row0 = coord.tile_m * T::kBlockM;
    const int col0 = coord.tile_n * T::kBlockN;
    for (int kb = k_begin; kb < k_end; ++kb) {
      pipe.producer_acquire(state);
      unsigned long long* full = &pipe.full[state.index];
      // Every share multicast to us completes on our `full` barrier, so it expects the whole stage.
      mbarrier_arrive_expect_tx(full, T::kStageBytes);
      const int k0 = kb * T::kBlockK;
      // The first operand is shared along a cluster row, the second down a cluster column.
      if constexpr (T::kTransposed) {
        load_mn_major<T::kClusterN, T::kAChunks, T::kChunkBytes>(
            plan.a(state.index), map_a, full, row0, k0, p.cluster_column, p.row_mask);
        load_k_major<T::kClusterM, T::kBShareBytes, T::kBoxB1>(plan.b(state.index), map_b, full, k0,
                                                               col0, p.cluster_row, p.column_mask);
      } else {
        load_k_major<T::kClusterN, T::kAShareBytes, T::kBoxA1>(plan.a(state.index), map_a, full, k0,
                                                               row0, p.cluster_column, p.row_mask);
        load_mn_major<T::kClusterM, T::kChunks, T::kChunkBytes>(
            plan.b(state.index), map_b, full, col0, k0, p.cluster_row, p.column_mask);
      }
      state.advance();
    }
  }
}

// ---- consumer: one warpgroup -------------------------------------------------------------------
template <class T>
__device__ __forceinline__ void mainloop(const SharedPlan<T>& plan, int k_blocks, int row_base,
                                         unsigned peers,
                                         ::swr::sm90::PipelineState<T::kStages>& state,
                                         float (&acc)[T::kWgSlices][T::kAccumulators]) {
  using namespace ::swr::sm90;
  PipelineBarriers<T::kStages>& pipe = plan.pipe();
  const bool leader = threadIdx.x % kWarpgroupThreads == 0;
  int previous = 0;
  for (int kb = 0; kb < k_blocks; ++kb) {
    pipe.consumer_wait(state);
    // An m64 slice of A is 64 rows of K-major A or one 64-column chunk of MN-major A: 8 KB
    // either way. A k16 step is 32 bytes along a K-major row, 16 rows (2 KB) down an MN-major
    // chunk.
    const unsigned char* a = plan.a(state.index) + row_base * 128;
    const unsigned char* b = plan.b(state.index);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < T::kBlockK / 16; ++kk) {
      const unsigned long long desc_b =
          T::kTransposed ? make_desc_kmajor_sw128(b + kk * 32)
                         : make_desc_mnmajor_sw128(b + kk * 2048, T::kChunkBytes);
#pragma unroll
      for (int slice = 0; slice < T::kWgSlices; ++slice) {
        const unsigned long long desc_a =
            T::kTransposed
                ? make_desc_mnmajor_sw128(a + slice * T::kChunkBytes + kk * 2048, T::kChunkBytes)
                : make_desc_kmajor_sw128(a + slice * T::kChunkBytes + kk * 32);
        wgmma_ss_n<T::kBlockN, T::kElement, T::kTransposed ? 0 : 1, T::kTransposed ? 1 : 0>(
            acc[slice], desc_a, desc_b, (kb | kk) != 0);
      }
    }
    wgmma_commit();
    wgmma_wait<1>();  // the previous k block's wgmmas are done: release its slot
    if (kb > 0 && leader) pipe.template consumer_release_cluster<T::kClusterSize>(previous, peers);
    previous = state.index;
    state.advance();
  }
  wgmma_wait<0>();
  if (leader) pipe.template consumer_release_cluster<T::kClusterSize>(previous, peers);
}

template <class T>
__device__ __forceinline__ void consume(const SharedPlan<T>& plan, const Problem<T>& p,
                                        const OutputC& out, int consumer, int* tile_scratch) {
  using namespace ::swr::sm90;
  constexpr bool kDynamic = T::kPersistence == Persistence::dynamic_persistent;
  constexpr bool kPingpong = T::kMode == ConsumerMode::pingpong;
  const int row_base = kPingpong ? 0 : consumer * T::kWgRows;  // rows of the tile this WG owns
  const int my_turn = barrier_id::kOrderConsumer0 + consumer;
  const int their_turn = barrier_id::kOrderConsumer0 + (1 - consumer);
  PipelineState<T::kStages> state;
  if (kPingpong) {
    state.advance(consumer * p.k_blocks);                      // entry 0 belongs to consumer 0
    if (consumer == 1) named_barrier_arrive(their_turn, 256);  // consumer 0 goes first
  }
  float acc[T::kWgSlices][T::kAccumulators];
  constexpr bool kStreamK = T::kPersistence == Persistence::stream_k;
  StreamKItem item;  // stream-K only
  for (int j = kPingpong ? consumer : 0;; j += kPingpong ? 2 : 1) {
    int tile;
    int k_count = p.k_blocks;
    if constexpr (kStreamK) {
      if (!stream_k_item(p.stream_k, *plan.stream_k_range(), p.unit, j, item)) break;
      tile = item.tile;
      k_count = item.k_end - item.k_begin;
    } else if constexpr (kDynamic) {
      const int slot = j % T::kTileQueue;
      mbarrier_wait(&plan.tile_full()[slot], (j / T::kTileQueue) & 1);
      tile = plan.tile_ids()[slot];
      mbarrier_arrive(&plan.tile_empty()[slot]);  // every reading thread arrives
    } else {
      tile = static_entry(j, p.tiles, p.unit, p.units);
    }
    if (tile < 0) {
      if (kPingpong && tile == kEndSync) named_barrier_sync(my_turn, 256);
      break;
    }
    const TileCoord coord = p.coord(tile);
    if (kPingpong) named_barrier_sync(my_turn, 256);
    mainloop<T>(plan, k_count, row_base, p.peers(), state, acc);
    if (kPingpong) {
      named_barrier_arrive(their_turn, 256);  // the other WG's mainloop may start
      state.advance(p.k_blocks);              // skip the other WG's tile in the ring
    }
    // A cluster's second CTA may sit past the last row (column) of tiles: it computed zeros (its
    // loads were out of bounds), skip the store.
    if (T::kClusterSize > 1 && (coord.tile_m >= p.tiles_m || coord.tile_n >= p.tiles_n)) continue;
    if constexpr (kStreamK) {
      const StreamKScratch<T> scratch(tile_scratch);
      const StreamKFixup fixup = stream_k_fixup(*plan.stream_k_range(), item, p.unit);
      if (fixup.contributor) {
        stream_k_publish<T>(acc, scratch, consumer);
        continue;
      }
      if (fixup.last_unit != fixup.finisher) {
        stream_k_collect<T>(acc, scratch, consumer, fixup.finisher, fixup.last_unit, p.rank);
      }
    }
    Epilogue<T>::store(acc, plan.c(consumer), out, consumer, coord.tile_m * T::kBlockM + row_base,
                       coord.tile_n * T::kBlockN);
  }
  Epilogue<T>::drain();
}

// ---- kernel body -----------------------------------------------------------------------------
// map_a: A [M][K] dims {K, M} box {64, BlockM / ClusterN}; map_b: B [K][N] dims {N, K} box {64,
// 64}; map_c: C [M][N] dims {N, M} box {64, kWgRows}; all SWIZZLE_128B, 16-bit elements. c: C
// itself (16-byte aligned), written directly by EpilogueKind::direct (map_c unused there).
// tile_counter: dynamic persistence: one int, zero at launch; stream-K: the scratch of
// gemm_stream_k_sm90.cuh (flags zero at launch); may be null otherwise.
template <class T>
__device__ __forceinline__ void gemm_ws(const ::swr::sm90::TmaDescriptor& map_a,
                                        const ::swr::sm90::TmaDescriptor& map_b,
                                        const ::swr::sm90::TmaDescriptor& map_c, void* c, int m,
                                        int n, int k, int swizzle_axis, int swizzle_group,
                                        int* tile_counter) {
  using namespace ::swr::sm90;
  extern __shared__ __align__(1024) unsigned char shared_raw[];
  SharedPlan<T> plan;
  plan.base = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(shared_raw) + 1023) & ~1023ull);
  Problem<T> p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.tiles_m = (m + T::kBlockM - 1) / T::kBlockM;
  p.tiles_n = (n + T::kBlockN - 1) / T::kBlockN;
  p.cluster_tiles_m = (p.tiles_m + T::kClusterM - 1) / T::kClusterM;
  p.cluster_tiles_n = (p.tiles_n + T::kClusterN - 1) / T::kClusterN;
  p.tiles = p.cluster_tiles_m * p.cluster_tiles_n;
  if constexpr (T::kClusterSize == 1) {
    p.rank = 0;
    p.unit = static_cast<int>(blockIdx.x);
    p.units = static_cast<int>(gridDim.x);
  } else {
    p.rank = static_cast<int>(cluster_cta_rank());
    p.unit = static_cast<int>(blockIdx.x) / T::kClusterSize;
    p.units = static_cast<int>(gridDim.x) / T::kClusterSize;
  }
  // (Written so that a cluster along one axis folds to constants.)
  p.cluster_row = T::kClusterM == 1 ? 0 : p.rank % T::kClusterM;
  p.cluster_column = T::kClusterN == 1 ? 0 : p.rank / T::kClusterM;
  p.row_mask = cluster_row_mask(T::kClusterM, T::kClusterN, p.cluster_row);
  p.column_mask = cluster_column_mask(T::kClusterM, p.cluster_column);
  p.k_blocks = (k + T::kBlockK - 1) / T::kBlockK;
  constexpr bool kStreamK = T::kPersistence == Persistence::stream_k;
  if constexpr (kStreamK) p.stream_k = stream_k_schedule(p.tiles, p.units, p.k_blocks);
  p.swizzle_axis = swizzle_axis;
  p.swizzle_group = swizzle_group;

  constexpr bool kPingpong = T::kMode == ConsumerMode::pingpong;
  if (threadIdx.x == 0) {
    // full: the producer's expect_tx arrival (+ bytes); empty: one leader per reading consumer
    // warpgroup of every CTA that multicasts into the slot (Traits::kClusterPeers).
    plan.pipe().init(1, (kPingpong ? 1 : T::kConsumers) * T::kClusterPeers);
    if constexpr (kStreamK) *plan.stream_k_range() = stream_k_range(p.stream_k, p.unit);
    for (int s = 0; s < (kStreamK ? 0 : T::kTileQueue); ++s) {
      mbarrier_init(&plan.tile_full()[s], 1);
      mbarrier_init(&plan.tile_empty()[s],
                    kPingpong ? kWarpgroupThreads : kWarpgroupThreads * T::kConsumers);
    }
    mbarrier_init_fence();
    tma_prefetch_descriptor(&map_a);
    tma_prefetch_descriptor(&map_b);
    tma_prefetch_descriptor(&map_c);
  }
  // The last CTA-wide barrier: roles never meet at ID 0 again. A cluster also needs its peers'
  // barriers initialised before the first multicast or remote arrival.
  if constexpr (T::kClusterSize == 1) {
    __syncthreads();
  } else {
    cluster_sync_aligned();
  }

  const int warpgroup = warpgroup_index();
  if (warpgroup == 0) {
    warpgroup_reg_dealloc<T::kProducerRegisters>();
    if (threadIdx.x == 0) produce<T>(plan, p, &map_a, &map_b, tile_counter);
  } else {
    warpgroup_reg_alloc<T::kConsumerRegisters>();
    OutputC out;
    out.map = &map_c;
    out.pointer = static_cast<unsigned short*>(c);
    out.m = m;
    out.n = n;
    consume<T>(plan, p, out, warpgroup - 1, tile_counter);
  }
  // No CTA of a cluster may exit while a peer can still multicast into it or arrive on its
  // barriers.
  if constexpr (T::kClusterSize > 1) cluster_sync();
}

}  // namespace sm90
}  // namespace gemm
}  // namespace swr
