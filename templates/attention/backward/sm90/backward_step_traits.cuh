// What the traits of both wgmma attention backward kernels share (backward_traits.cuh, without a
// producer; backward_ws_traits.cuh and backward_ws_wide_traits.cuh, warp-specialized): the schedule
// knobs, and the tiles of one step as backward_step.cuh reads them. KvWarpgroups warpgroups of 64
// K/V rows own a K/V tile of BlockN = 64 * KvWarpgroups rows and take BlockM Q rows a step;
// DqWarpgroups warpgroups share dQ = dS K. Every tile wgmma reads lies as 64-column chunks of
// 128-byte swizzled rows, each chunk on a 1024-byte boundary.
#pragma once

#include "attention/attention_schedule.cuh"
#include "common/element.cuh"
#include "common/host_device.cuh"

namespace swr {
namespace attention {
namespace sm90 {

template <int HeadDim, int BlockM, int KvWarpgroups, int DqWarpgroups, Element Elem, bool Causal,
          KvOrder Order, Persistence Persist, TileSwizzle Swizzle, int HeadGroup,
          bool DeterministicDq>
struct BackwardStepTraits {
  static constexpr int kHeadDim = HeadDim;
  static constexpr int kBlockM = BlockM;             // Q rows per step
  static constexpr int kBlockN = 64 * KvWarpgroups;  // K/V rows a CTA owns
  static constexpr Element kElement = Elem;
  static constexpr bool kCausal = Causal;
  static constexpr KvOrder kOrder = Order;
  static constexpr Persistence kPersistence = Persist;
  static constexpr TileSwizzle kSwizzle = Swizzle;
  static constexpr int kHeadGroup = HeadGroup;
  static constexpr bool kDeterministicDq = DeterministicDq;

  // dQ = dS K of a step, [BlockM x HeadDim], over the DqWarpgroups (wgmma M is 64 rows): each
  // takes 64 Q rows when BlockM has one 64-row slice per warpgroup, else (BlockM = 64) its share
  // of the columns in whole 64-column chunks of K. A BlockM of no whole 64-row slices (80, as
  // FlashAttention-3 takes at head dim 128 without a mask) has no m64 dQ: each warpgroup computes
  // its columns transposed, dQ^T = K^T dS^T, m64 (its head-dim columns) x BlockM (Q rows).
  static constexpr bool kDqTransposed = BlockM % 64 != 0;
  static constexpr bool kDqByRows = BlockM == 64 * DqWarpgroups;
  static constexpr int kDqColumns = kDqByRows ? HeadDim : HeadDim / DqWarpgroups;
  // The wgmma N of a warpgroup's dQ product, and its fp32 accumulators per thread.
  static constexpr int kDqN = kDqTransposed ? BlockM : kDqColumns;
  static constexpr int kDqRegisters = kDqN / 2;
  // Warpgroup wg's part of dQ starts at this row and column of the step's tile.
  static SWR_HOST_DEVICE constexpr int dq_row0(int wg) { return kDqByRows ? wg * 64 : 0; }
  static SWR_HOST_DEVICE constexpr int dq_column0(int wg) {
    return kDqByRows ? 0 : wg * kDqColumns;
  }

  static constexpr int kKvBytes = kBlockN * HeadDim * 2;  // one K or V tile
  static constexpr int kKvChunkBytes = kBlockN * 128;
  static constexpr int kQBytes = BlockM * HeadDim * 2;  // one Q or dO tile
  static constexpr int kQChunkBytes = BlockM * 128;
  // dS^T of a step: [BlockN K/V rows][BlockM Q columns], chunks of 64 Q columns, which dQ = dS K
  // reads MN-major; transposed dQ reads dS^T as its K-major B, so that the tile lies as dS,
  // [BlockM Q rows][BlockN K/V columns] in chunks of 64 K/V columns (backward_fragments.cuh).
  static constexpr int kDsBytes = kBlockN * BlockM * 2;
  static constexpr int kDsChunkBytes = (kDqTransposed ? BlockM : kBlockN) * 128;

  static_assert(HeadDim % 64 == 0, "head dims in whole 128-byte chunks");
  static_assert((BlockM % 64 == 0 && BlockM <= 128) || BlockM == 80,
                "Q rows in 64-column chunks of dS^T, or 80 with dQ transposed");
  static_assert(kDqByRows || (BlockM == 64 && kDqColumns % 64 == 0) ||
                    (kDqTransposed && kDqColumns == 64),
                "dQ's warpgroups take 64 rows each, or whole 64-column chunks (one transposed)");
  static_assert(HeadGroup >= 1, "head groups hold at least one head");
};

}  // namespace sm90
}  // namespace attention
}  // namespace swr
