// Compile-time knobs of the sm_90a warp-specialized GEMM and the shared-memory plan they imply.
// The host needs the same numbers (dynamic shared memory, TMA boxes): kDynamicSharedBytes and the
// box constants below are what a launcher must use (see runtime/gemm_tensor_maps.hpp).
#pragma once

#include "common/element.cuh"

namespace swr {
namespace gemm {
namespace sm90 {

// cooperative: both consumer warpgroups split each tile (BM/2 rows each).
// pingpong:    each consumer warpgroup owns alternate tiles; mainloops take turns, so one
//              warpgroup's epilogue overlaps the other's mainloop.
enum class ConsumerMode { cooperative, pingpong };
// static_persistent: grid ~ #SMs, CTA b takes linear tiles b, b + grid, ...
// dynamic_persistent: CTA b takes tile b, then tiles claimed from a global atomic counter
//                     (gridDim.x + atomicAdd); the counter must be 0 at launch.
// stream_k:           static for the whole waves, then the k blocks of the last partial wave's
//                     tiles split evenly over every CTA (gemm/stream_k.cuh; cooperative only).
enum class Persistence { static_persistent, dynamic_persistent, stream_k };
// tma_store: C staged in swizzled shared memory, written by the copy engine (asynchronous).
// direct:    same staging, then 16-byte st.global by the warpgroup (row-clipped by hand). For C
//            whose row pitch is not a multiple of 128 bytes (see the README's measurements).
enum class EpilogueKind { tma_store, direct };

template <int BlockM, int BlockN, int BlockK, int Stages, Element Elem, ConsumerMode Mode,
          Persistence Persist, int ClusterM = 1, int ClusterN = 1,
          EpilogueKind Epilogue = EpilogueKind::tma_store, int ProducerRegisters = 40,
          int ConsumerRegisters = 232>
struct Traits {
  static constexpr int kBlockM = BlockM;
  static constexpr int kBlockN = BlockN;
  static constexpr int kBlockK = BlockK;
  static constexpr int kStages = Stages;
  static constexpr Element kElement = Elem;
  static constexpr ConsumerMode kMode = Mode;
  static constexpr Persistence kPersistence = Persist;
  static constexpr int kProducerRegisters = ProducerRegisters;
  static constexpr int kConsumerRegisters = ConsumerRegisters;
  // Cluster of ClusterM x ClusterN CTAs; CTA rank r computes tile (ClusterM*cm + r % ClusterM,
  // ClusterN*cn + r / ClusterM) (block_swizzle.cuh's cluster_member_tile). The ClusterM CTAs of
  // one cluster column (same tile_n) share the B tile: the one in row i loads the 64-column chunks
  // c with c % ClusterM == i and multicasts them down the column. The ClusterN CTAs of one cluster
  // row (same tile_m) share the A tile: the one in column j loads rows [j, j + 1) * BlockM /
  // ClusterN of it and multicasts them along the row. 2x2 does both.
  static constexpr int kClusterM = ClusterM;
  static constexpr int kClusterN = ClusterN;
  static constexpr int kClusterSize = ClusterM * ClusterN;
  // CTAs whose producers write into one CTA's ring slot (its row and its column, itself once):
  // each of their consumers must release the slot before any of them refills it.
  static constexpr int kClusterPeers = ClusterM + ClusterN - 1;
  static constexpr EpilogueKind kEpilogue = Epilogue;

  static constexpr int kConsumers = 2;  // consumer warpgroups
  static constexpr int kThreads = 128 * (1 + kConsumers);
  // Rows of one tile that one consumer warpgroup computes, in wgmma m64 slices.
  static constexpr int kWgRows = Mode == ConsumerMode::cooperative ? BlockM / 2 : BlockM;
  static constexpr int kWgSlices = kWgRows / 64;
  static constexpr int kAccumulators = BlockN / 2;  // floats per thread per m64 slice

  // Shared memory, all 1024-byte aligned (128B-swizzle atoms):
  //   stage s: A [BlockM][64] (BlockM*128 B), then B as kChunks chunks of [64 k][64 n] (8 KB)
  //   C staging, per consumer warpgroup: kChunks chunks of [kWgRows][64] 128B-swizzled.
  // A BlockN that is not a multiple of 64 (176, 240: tiles that divide a ragged N into whole
  // waves) ends in a part chunk of kPartColumns: B still arrives as whole 64-column TMA boxes
  // (the wgmma reads the first BlockN columns; the rest are the next tile's, or zero past N), and
  // the epilogue stores the part chunk's columns directly rather than by a 64-column TMA box
  // (which would write into the next tile).
  static constexpr int kChunks = (BlockN + 63) / 64;
  static constexpr int kFullChunks = BlockN / 64;
  static constexpr int kPartColumns = BlockN % 64;
  static constexpr int kABytes = BlockM * BlockK * 2;
  static constexpr int kBChunkBytes = BlockK * 64 * 2;
  static constexpr int kBBytes = kChunks * kBChunkBytes;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kCChunkBytes = kWgRows * 64 * 2;
  static constexpr int kCBytesPerConsumer = kChunks * kCChunkBytes;
  static constexpr int kCOffset = Stages * kStageBytes;
  static constexpr int kTileQueue = 2;  // dynamic persistence: tile ids in flight
  // Barriers and the tile queue live after C; +1024 for aligning the dynamic base.
  static constexpr int kBarrierOffset = kCOffset + kConsumers * kCBytesPerConsumer;
  static constexpr int kBarrierBytes = 8 * (2 * Stages + 2 * kTileQueue) + 4 * kTileQueue;
  static constexpr int kDynamicSharedBytes = 1024 + kBarrierOffset + kBarrierBytes;

  // TMA boxes the host must encode ({inner, outer} in elements, SWIZZLE_128B for all three):
  //   A [M][K]: dims {K, M}, box {64, BlockM / ClusterN};  B [K][N]: dims {N, K}, box {64, 64};
  //   C [M][N]: dims {N, M}, box {64, kWgRows}.
  static constexpr int kBoxA0 = 64, kBoxA1 = BlockM / ClusterN;
  static constexpr int kAShareBytes = kBoxA1 * 128;  // one CTA's multicast share of A
  static constexpr int kBoxB0 = 64, kBoxB1 = BlockK;
  static constexpr int kBoxC0 = 64, kBoxC1 = kWgRows;

  static_assert((ClusterM == 1 || ClusterM == 2) && (ClusterN == 1 || ClusterN == 2),
                "clusters 1x1, 2x1, 1x2, 2x2");
  static_assert(kClusterSize == 1 || Persist != Persistence::dynamic_persistent,
                "a cluster needs one tile order for all its CTAs: static persistence or stream-K");
  static_assert(Persist != Persistence::stream_k || Mode == ConsumerMode::cooperative,
                "stream-K items have uneven k lengths: pingpong's ring skipping assumes even ones");
  static_assert(kBoxA1 % 8 == 0, "an A share is whole 1024-byte swizzle atoms");
  static_assert(BlockK == 64, "one 128-byte swizzle row of 16-bit elements per k block");
  static_assert(BlockN % 16 == 0 && BlockN >= 64 && BlockN <= 256,
                "wgmma N: a multiple of 16; B and C travel in 64-column chunks");
  static_assert(BlockM <= 256, "TMA box rows <= 256");
  static_assert(kWgRows % 64 == 0 && kWgSlices >= 1, "a warpgroup computes m64 slices");
  static_assert(kWgSlices * kAccumulators <= 128, "accumulators of one warpgroup fit 128 floats");
  static_assert(kDynamicSharedBytes <= 232448, "227 KB of shared memory per CTA");
  static_assert(ProducerRegisters * 128 + ConsumerRegisters * 256 <= 65536, "register file");
};

}  // namespace sm90
}  // namespace gemm
}  // namespace swr
