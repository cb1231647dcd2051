// Shared-memory plan and roles of the warp-specialized wgmma attention backward for wide heads
// (sm_90a, backward_kernel_ws_wide.cuh; its step and knobs: backward_step_traits.cuh): a CTA owns
// 64 K/V rows and takes 64 Q rows a step, and its two consumer warpgroups split the products of a
// step instead of the rows (a warpgroup's registers hold one of dK and dV of 64 rows x head dim,
// not both). Warpgroup 0 of the producer loads as in the other warp-specialized kernel; the
// consumers add dQ into the workspace themselves, so that the shared memory holds two stages of
// Q and dO. The tiles wgmma reads lie as 64-column chunks of 128-byte swizzled rows, each chunk on
// a 1024-byte boundary (as TMA writes them).
#pragma once

#include "attention/backward/dq_accumulator_layout.cuh"
#include "attention/backward/sm90/backward_step_traits.cuh"
#include "attention/backward/sm90/backward_ws_registers.cuh"

namespace swr {
namespace attention {
namespace sm90 {

template <int HeadDim, int Stages, Element Elem, bool Causal, KvOrder Order, Persistence Persist,
          TileSwizzle Swizzle, int HeadGroup, bool DeterministicDq>
struct BackwardWsWideTraits : BackwardStepTraits<HeadDim, 64, 1, 2, Elem, Causal, Order, Persist,
                                                 Swizzle, HeadGroup, DeterministicDq>,
                              BackwardWsRoles<HeadDim, 64, Stages> {
  using Step = BackwardStepTraits<HeadDim, 64, 1, 2, Elem, Causal, Order, Persist, Swizzle,
                                  HeadGroup, DeterministicDq>;

  // The masked copy of P^T's loop (backward_step.cuh) only where the causal mask is: without it
  // the branch made the wide kernel 5% slower (one variant, 2.881 -> 3.020 ms, at B1 H8 S8192 in
  // two tuning runs), and the padding keys it would mask cost nothing unmasked.
  static constexpr bool kMaskByBranch = Causal;
  // Whole tiles only (the last wave's split: BackwardWsTraits).
  static constexpr bool kSplitsLastWave = false;
  // Who reads each of dynamic persistence's tiles from the queue: every consumer thread and the
  // producer.
  static constexpr int kClusterCtas = 1;
  static constexpr int kTileReaders = BackwardWsRoles<HeadDim, 64, Stages>::kConsumerThreads + 1;

  // dQ as the consumers add it (each warpgroup half the columns: DqFragmentLayout's split).
  using DqLayout = DqFragmentLayout<HeadDim, 64>;
  static constexpr int kListBytes = 64 * 4;  // a step's L * log2(e), or its delta

  // dS^T of a step (one slot: the dS warpgroup writes the next only after the P warpgroup has
  // handed over the next P^T, which it does after its dQ of this step has completed) and P^T as
  // the P warpgroup hands it over, one 32-bit word of packed pairs per thread and register.
  static constexpr int kPExchangeBytes = 64 * 64 * 2;

  static constexpr int kKOffset = 0;
  static constexpr int kVOffset = Step::kKvBytes;
  static constexpr int kQOffset = 2 * Step::kKvBytes;
  static constexpr int kDoOffset = kQOffset + Stages * Step::kQBytes;
  static constexpr int kDsOffset = kDoOffset + Stages * Step::kQBytes;
  static constexpr int kPOffset = kDsOffset + Step::kDsBytes;
  static constexpr int kLseOffset = kPOffset + kPExchangeBytes;
  static constexpr int kDeltaOffset = kLseOffset + Stages * kListBytes;
  static constexpr int kBarrierOffset = kDeltaOffset + Stages * kListBytes;
  static constexpr int kBarrierBytes = 256;
  // + 1024: the dynamic shared memory is aligned up to the swizzle repeat by the kernel.
  static constexpr int kSharedBytes = kBarrierOffset + kBarrierBytes + 1024;

  static_assert(!Step::kDqByRows && Step::kDqColumns == HeadDim / 2 &&
                    DqLayout::kColumns == Step::kDqColumns,
                "each consumer adds half the columns of dQ, as the accumulator layout splits them");
  static_assert(HeadDim % 128 == 0, "dQ's halves in whole 64-column chunks");
  static_assert(HeadDim / 2 + HeadDim / 4 + 16 + 24 <=
                    BackwardWsRoles<HeadDim, 64, Stages>::kConsumerRegisters,
                "dK or dV, half of dQ, the packed step and 24 more in a consumer's registers");
  static_assert(Stages >= 1 && Stages <= 2, "Q/dO pipeline depth 1..2");
  static_assert(kSharedBytes <= 232448, "sm_90 opt-in shared memory per block");
};

}  // namespace sm90
}  // namespace attention
}  // namespace swr
