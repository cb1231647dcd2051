// Knobs and shared-memory plan of the wgmma attention backward (sm_90a): Warpgroups warpgroups of
// 64 K/V rows each own a K/V tile of BlockN = 64 * Warpgroups rows and walk the Q tiles of
// BlockM rows. Every tile the wgmma instructions read lies as 64-column chunks of 128-byte
// swizzled rows (common/sm90/swizzled_chunk_copy.cuh), each chunk on a 1024-byte boundary.
#pragma once

#include "attention/attention_schedule.cuh"
#include "common/element.cuh"

namespace swr {
namespace attention {
namespace sm90 {

template <int HeadDim, int BlockM, int Warpgroups, int Stages, Element Elem, bool Causal,
          KvOrder Order, Persistence Persist, TileSwizzle Swizzle, int HeadGroup,
          bool DeterministicDq>
struct BackwardTraits {
  static constexpr int kHeadDim = HeadDim;
  static constexpr int kBlockM = BlockM;  // Q rows per step
  static constexpr int kWarpgroups = Warpgroups;
  static constexpr int kBlockN = 64 * Warpgroups;  // K/V rows a CTA owns
  static constexpr int kThreads = 128 * Warpgroups;
  static constexpr int kStages = Stages;
  static constexpr Element kElement = Elem;
  static constexpr bool kCausal = Causal;
  static constexpr KvOrder kOrder = Order;
  static constexpr Persistence kPersistence = Persist;
  static constexpr TileSwizzle kSwizzle = Swizzle;
  static constexpr int kHeadGroup = HeadGroup;
  static constexpr bool kDeterministicDq = DeterministicDq;

  // dQ = dS K of a step, [BlockM x HeadDim], over the warpgroups (wgmma M is 64 rows): each takes
  // 64 Q rows when BlockM has one 64-row slice per warpgroup, else (BlockM = 64) its share of
  // the columns in whole 64-column chunks of K.
  static constexpr bool kDqByRows = BlockM == 64 * Warpgroups;
  static constexpr int kDqColumns = kDqByRows ? HeadDim : HeadDim / Warpgroups;

  static constexpr int kKvBytes = kBlockN * HeadDim * 2;  // one K or V tile
  static constexpr int kKvChunkBytes = kBlockN * 128;
  static constexpr int kQBytes = BlockM * HeadDim * 2;  // one Q or dO tile
  static constexpr int kQChunkBytes = BlockM * 128;
  // dS^T of a step: [BlockN K/V rows][BlockM Q columns], chunks of 64 Q columns.
  static constexpr int kDsBytes = kBlockN * BlockM * 2;
  static constexpr int kDsChunkBytes = kBlockN * 128;
  static constexpr int kListBytes = 2 * BlockM * 4;  // L * log2(e) and delta of a step

  static constexpr int kKOffset = 0;
  static constexpr int kVOffset = kKvBytes;
  static constexpr int kQOffset = 2 * kKvBytes;
  static constexpr int kDoOffset = kQOffset + Stages * kQBytes;
  static constexpr int kDsOffset = kDoOffset + Stages * kQBytes;
  static constexpr int kListOffset = kDsOffset + kDsBytes;
  // + 1024: the dynamic shared memory is aligned up to the swizzle repeat by the kernel.
  static constexpr int kSharedBytes = kListOffset + Stages * kListBytes + 1024;

  static_assert(HeadDim % 64 == 0, "head dims in whole 128-byte chunks");
  static_assert(Warpgroups == 2, "two warpgroups of 64 K/V rows");
  static_assert(BlockM % 64 == 0 && BlockM <= 128, "Q rows in 64-column chunks of dS^T");
  static_assert(kDqByRows || (BlockM == 64 && kDqColumns % 64 == 0),
                "dQ's warpgroups take 64 rows each, or whole 64-column chunks");
  static_assert(Stages >= 1 && Stages <= 3, "Q/dO pipeline depth 1..3");
  static_assert(HeadGroup >= 1, "head groups hold at least one head");
  static_assert(kSharedBytes <= 232448, "sm_90 opt-in shared memory per block");
};

}  // namespace sm90
}  // namespace attention
}  // namespace swr
