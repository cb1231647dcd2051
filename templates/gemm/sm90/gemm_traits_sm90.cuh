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
// a_times_b:   C = A · B; A is the K-major first operand, B the MN-major second one, C row-major.
// bt_times_at: C^T = B^T · A^T, for shapes whose ragged side is M: the kernel's M is swr's N and
//              its N (any multiple of 16) is swr's M. Its first operand is swr's B, read MN-major,
//              its second swr's A, read K-major, and its tile of C^T is stored transposed into C.
//              BlockM, BlockN, ClusterM and ClusterN are then those of C^T.
enum class ProductOrder { a_times_b, bt_times_at };

template <int BlockM, int BlockN, int BlockK, int Stages, Element Elem, ConsumerMode Mode,
          Persistence Persist, int ClusterM = 1, int ClusterN = 1,
          ProductOrder Order = ProductOrder::a_times_b,
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
  static constexpr bool kTransposed = Order == ProductOrder::bt_times_at;
  // Cluster of ClusterM x ClusterN CTAs; CTA rank r computes tile (ClusterM*cm + r % ClusterM,
  // ClusterN*cn + r / ClusterM) (block_swizzle.cuh's cluster_member_tile). The ClusterM CTAs of
  // one cluster column (same tile_n) share the second operand's tile, the ClusterN CTAs of one
  // cluster row (same tile_m) the first operand's; 2x2 does both. A K-major operand is shared by
  // rows (the CTA at place j of the sharers loads rows [j, j + 1) * rows / sharers and multicasts
  // them), an MN-major one by 64-column chunks (the one at place j loads the chunks c with
  // c % sharers == j).
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
  // bt_times_at: the first operand as BlockM / 64 chunks of [64 k][64 m] (BlockM*128 B), the
  // second as [BlockN][64 k] (BlockN*128 B), and C staged as kWgSlices chunks of [BlockN rows of
  // C][64 columns of C] (each wgmma m64 slice is 64 columns of C).
  // A BlockN that is not a multiple of 64 (176, 240: tiles that divide a ragged N into whole
  // waves) ends in a part chunk of kPartColumns: B still arrives as whole 64-column TMA boxes
  // (the wgmma reads the first BlockN columns; the rest are the next tile's, or zero past N), and
  // the epilogue stores the part chunk's columns directly rather than by a 64-column TMA box
  // (which would write into the next tile).
  static constexpr int kChunks = (BlockN + 63) / 64;
  static constexpr int kFullChunks = BlockN / 64;
  static constexpr int kPartColumns = BlockN % 64;
  static constexpr int kABytes = BlockM * BlockK * 2;
  // One MN-major chunk, [64 k][64 columns], of either operand; also an m64 slice of K-major A.
  static constexpr int kChunkBytes = BlockK * 64 * 2;
  static constexpr int kBBytes = kTransposed ? BlockN * 128 : kChunks * kChunkBytes;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kCChunkBytes = kTransposed ? BlockN * 128 : kWgRows * 64 * 2;
  static constexpr int kCBytesPerConsumer = (kTransposed ? kWgSlices : kChunks) * kCChunkBytes;
  static constexpr int kCOffset = Stages * kStageBytes;
  static constexpr int kTileQueue = 2;  // dynamic persistence: tile ids in flight
  // Barriers and the tile queue live after C; +1024 for aligning the dynamic base.
  static constexpr int kBarrierOffset = kCOffset + kConsumers * kCBytesPerConsumer;
  static constexpr int kBarrierBytes = 8 * (2 * Stages + 2 * kTileQueue) + 4 * kTileQueue;
  static constexpr int kDynamicSharedBytes = 1024 + kBarrierOffset + kBarrierBytes;

  // TMA boxes the host must encode ({inner, outer} in elements, SWIZZLE_128B for all three):
  //   A [M][K]: dims {K, M}, box {64, BlockM / ClusterN};  B [K][N]: dims {N, K}, box {64, 64};
  //   C [M][N]: dims {N, M}, box {64, kWgRows}.
  // bt_times_at (M, N of C^T): map_a over swr's B: dims {M, K}, box {64, 64}; map_b over swr's A:
  //   dims {K, N}, box {64, BlockN / ClusterM}; C: dims {M, N}, box {64, BlockN}.
  static constexpr int kBoxA0 = 64, kBoxA1 = kTransposed ? BlockK : BlockM / ClusterN;
  static constexpr int kAShareBytes = kBoxA1 * 128;  // one CTA's multicast share of K-major A
  static constexpr int kAChunks = BlockM / 64;       // MN-major A's chunks
  static constexpr int kBoxB0 = 64, kBoxB1 = kTransposed ? BlockN / ClusterM : BlockK;
  static constexpr int kBShareBytes = kBoxB1 * 128;  // one CTA's multicast share of K-major B
  static constexpr int kBoxC0 = 64, kBoxC1 = kTransposed ? BlockN : kWgRows;

  static_assert((ClusterM == 1 || ClusterM == 2) && (ClusterN == 1 || ClusterN == 2),
                "clusters 1x1, 2x1, 1x2, 2x2");
  static_assert(kClusterSize == 1 || Persist != Persistence::dynamic_persistent,
                "a cluster needs one tile order for all its CTAs: static persistence or stream-K");
  static_assert(Persist != Persistence::stream_k || Mode == ConsumerMode::cooperative,
                "stream-K items have uneven k lengths: pingpong's ring skipping assumes even ones");
  static_assert(kBoxA1 % 8 == 0 && kBoxB1 % 8 == 0, "a share is whole 1024-byte swizzle atoms");
  static_assert(!kTransposed || (Epilogue == EpilogueKind::tma_store && BlockM % 64 == 0),
                "C^T = B^T A^T: the TMA store epilogue, and A in whole 64-column chunks");
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
