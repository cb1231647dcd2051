// Knobs of the warp-specialized sm_90a attention forward kernel (TMA + mbarrier ring + wgmma).
// One producer warpgroup (warpgroup 0: a single thread issues every TMA load) and ConsumerWgs
// consumer warpgroups of 64 Q rows each, so BlockM = 64 * ConsumerWgs.
#pragma once

#include "attention/attention_schedule.cuh"
#include "common/element.cuh"

namespace swr {
namespace attention {
namespace sm90 {

using swr::Element;

enum class KvCacheHint { none, evict_last };

template <int HeadDim, int ConsumerWgs, int BlockN, int Stages, Element Elem, bool Causal,
          bool IntraWgOverlap, bool Pingpong, KvOrder Order, Persistence Persist,
          TileSwizzle Swizzle, int HeadGroup, KvCacheHint Hint, bool PInSharedMemory,
          bool PlantedHang = false>
struct Traits {
  static constexpr int kHeadDim = HeadDim;
  static constexpr int kConsumerWgs = ConsumerWgs;
  static constexpr int kBlockM = 64 * ConsumerWgs;
  static constexpr int kBlockN = BlockN;
  static constexpr int kStages = Stages;
  static constexpr Element kElement = Elem;
  static constexpr bool kCausal = Causal;
  static constexpr bool kIntraWgOverlap = IntraWgOverlap;
  static constexpr bool kPingpong = Pingpong;
  static constexpr KvOrder kOrder = Order;
  static constexpr Persistence kPersistence = Persist;
  static constexpr TileSwizzle kSwizzle = Swizzle;
  static constexpr int kHeadGroup = HeadGroup;
  static constexpr KvCacheHint kHint = Hint;
  // O += P V with P from shared memory (wgmma SS) instead of registers (RS).
  static constexpr bool kPInSharedMemory = PInSharedMemory;
  // Test-only (never enumerated): the producer issues no load, so the consumers wait forever on
  // the Q mbarrier (or the tile queue): proves that the tuner records a hang as a timeout.
  static constexpr bool kPlantedHang = PlantedHang;

  static constexpr int kThreads = 128 * (1 + ConsumerWgs);
  // setmaxnreg split (FA3 flash_fwd_kernel_sm90.h): 24/240 with 2 consumer WGs, 32/160 with 3.
  static constexpr int kProducerRegisters = ConsumerWgs == 2 ? 24 : 32;
  static constexpr int kConsumerRegisters = ConsumerWgs == 2 ? 240 : 160;

  // Shared memory: every tile is kChunks column chunks of [rows][kChunkColumns] 16-bit elements,
  // chunks back to back, each swizzled over its row width (the layout a TMA box {kChunkColumns,
  // rows} writes with the swizzle of that span). kChunkColumns is the widest of 64, 32, 16 that
  // divides HeadDim (FA3's rule): 128-byte swizzle for D = 64, 128, 192, 256; 64-byte for 32, 96,
  // 160; 32-byte for 80. No column is padded, so no wgmma works on zeros, and PV stays one
  // wgmma of N = HeadDim (a uniform swizzle across the chunks of V is what its MN-major
  // descriptor needs). Every chunk starts on its swizzle's repeat (8 rows of it: 1024, 512 or
  // 256 bytes), since rows are a multiple of 16.
  static constexpr int kChunkColumns = HeadDim % 64 == 0 ? 64 : HeadDim % 32 == 0 ? 32 : 16;
  static constexpr int kSwizzleBytes = kChunkColumns * 2;
  static constexpr int kChunks = HeadDim / kChunkColumns;
  static constexpr int kQBytes = kBlockM * HeadDim * 2;
  static constexpr int kKvBytes = BlockN * HeadDim * 2;  // one K or one V tile
  static constexpr int kQChunkBytes = kBlockM * kSwizzleBytes;
  static constexpr int kKvChunkBytes = BlockN * kSwizzleBytes;
  // P through shared memory: per consumer warpgroup its [64 rows][BlockN keys] of P, K-major as
  // the A operand of the PV wgmma: 64-key chunks of [64 rows][128 B], 128B-swizzled (8 KB each;
  // a BlockN that is not a multiple of 64 leaves the last chunk part empty). After K and V, which
  // end on a 1024-byte boundary: their rows (BlockM + 2 Stages BlockN) are a multiple of 32 and
  // HeadDim of 16.
  static constexpr int kPChunkBytes = 64 * 128;
  static constexpr int kPBytesPerWarpgroup = (BlockN + 63) / 64 * kPChunkBytes;
  static constexpr int kPBytes = PInSharedMemory ? ConsumerWgs * kPBytesPerWarpgroup : 0;
  static constexpr int kPOffset = kQBytes + 2 * Stages * kKvBytes;
  static constexpr int kTileBytes = kPOffset + kPBytes;
  // + 1024 to align the tiles to the 1024-byte swizzle atom + the mbarriers and the tile queue.
  static constexpr int kBarrierBytes = 256;
  static constexpr int kDynamicSharedBytes = kTileBytes + 1024 + kBarrierBytes;

  static_assert(HeadDim % 16 == 0 && HeadDim >= 16 && HeadDim <= 256,
                "head dims: multiples of 16 up to 256 (wgmma N of PV, k16 steps of Q K^T)");
  static_assert(ConsumerWgs == 2 || ConsumerWgs == 3, "BlockM 128 (2 WGs) or 192 (3 WGs)");
  static_assert(BlockN % 16 == 0 && BlockN >= 16 && BlockN <= 256, "wgmma N and TMA box");
  static_assert(Stages >= 1 && Stages <= 4, "K/V ring depth");
  static_assert(kPOffset % 1024 == 0, "P's 128B-swizzled chunks start on a 1024-byte boundary");
  static_assert(kDynamicSharedBytes <= 232448, "sm_90 opt-in shared memory per block");
  static_assert(!Pingpong || (ConsumerWgs >= 2 && ConsumerWgs <= 3),
                "pingpong orders two or three consumer WGs (barrier_id::order_consumer)");
  static_assert(HeadGroup >= 1, "head groups hold at least one head");
};

}  // namespace sm90
}  // namespace attention
}  // namespace swr
