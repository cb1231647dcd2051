// Shared-memory plan of the wgmma attention backward without a producer (sm_90a,
// backward_kernel.cuh): its step (backward_step_traits.cuh) with its own tiles staged by
// cp.async (common/sm90/swizzled_chunk_copy.cuh) and a step's L and delta in one list slot.
#pragma once

#include "attention/backward/sm90/backward_step_traits.cuh"

namespace swr {
namespace attention {
namespace sm90 {

template <int HeadDim, int BlockM, int Warpgroups, int Stages, Element Elem, bool Causal,
          KvOrder Order, Persistence Persist, TileSwizzle Swizzle, int HeadGroup,
          bool DeterministicDq>
struct BackwardTraits : BackwardStepTraits<HeadDim, BlockM, Warpgroups, Warpgroups, Elem, Causal,
                                           Order, Persist, Swizzle, HeadGroup, DeterministicDq> {
  using Step = BackwardStepTraits<HeadDim, BlockM, Warpgroups, Warpgroups, Elem, Causal, Order,
                                  Persist, Swizzle, HeadGroup, DeterministicDq>;
  static constexpr int kWarpgroups = Warpgroups;
  static constexpr int kThreads = 128 * Warpgroups;
  static constexpr int kStages = Stages;
  // dS^T stored a word at a time (backward_fragments.cuh: stmatrix spilled at 255 registers).
  static constexpr bool kDsByStmatrix = false;
  // The mask compared in every warp, no copy of P^T's loop for it (backward_step.cuh: the copy
  // spilled 12 bytes at 255 registers).
  static constexpr bool kMaskByBranch = false;
  static constexpr int kListBytes = 2 * BlockM * 4;  // L * log2(e) and delta of a step

  static constexpr int kKOffset = 0;
  static constexpr int kVOffset = Step::kKvBytes;
  static constexpr int kQOffset = 2 * Step::kKvBytes;
  static constexpr int kDoOffset = kQOffset + Stages * Step::kQBytes;
  static constexpr int kDsOffset = kDoOffset + Stages * Step::kQBytes;
  static constexpr int kListOffset = kDsOffset + Step::kDsBytes;
  // + 1024: the dynamic shared memory is aligned up to the swizzle repeat by the kernel.
  static constexpr int kSharedBytes = kListOffset + Stages * kListBytes + 1024;

  static_assert(Warpgroups == 2, "two warpgroups of 64 K/V rows");
  static_assert(Stages >= 1 && Stages <= 3, "Q/dO pipeline depth 1..3");
  static_assert(kSharedBytes <= 232448, "sm_90 opt-in shared memory per block");
};

}  // namespace sm90
}  // namespace attention
}  // namespace swr
