// Shared-memory plan and roles of the warp-specialized wgmma attention backward (sm_90a,
// backward_kernel_ws.cuh; its step and knobs: backward_step_traits.cuh): warpgroup 0 is the
// producer (one thread issues the TMA loads, one warp adds dQ into the workspace with bulk
// reductions), warpgroups 1 and 2 each own 64 rows of a 128-row K/V tile and walk the Q tiles of
// BlockM rows. The tiles wgmma reads lie as 64-column chunks of 128-byte swizzled rows, each chunk
// on a 1024-byte boundary (as TMA writes them).
#pragma once

#include "attention/backward/backward_schedule.cuh"
#include "attention/backward/dq_accumulator_layout.cuh"
#include "attention/backward/sm90/backward_step_traits.cuh"
#include "attention/backward/sm90/backward_ws_registers.cuh"

namespace swr {
namespace attention {
namespace sm90 {

template <int HeadDim, int BlockM, int Stages, Element Elem, bool Causal, KvOrder Order,
          Persistence Persist, TileSwizzle Swizzle, int HeadGroup, bool DeterministicDq,
          bool LaggedDq, bool CtaPairs = false, bool DqFromRegisters = false>
struct BackwardWsTraits : BackwardStepTraits<HeadDim, BlockM, 2, 2, Elem, Causal, Order, Persist,
                                             Swizzle, HeadGroup, DeterministicDq>,
                          BackwardWsRoles<HeadDim, BlockM, Stages> {
  using Step = BackwardStepTraits<HeadDim, BlockM, 2, 2, Elem, Causal, Order, Persist, Swizzle,
                                  HeadGroup, DeterministicDq>;

  // The masked copy of P^T's loop (backward_step.cuh) where a mask is: causal, so that the warps
  // past the diagonal skip it; or without one below 128 Q rows a step, where the branch keeps the
  // exponentials before the dP^T wait (1.016-1.036x at 64 rows, head dim 128; 1.005-1.013x at
  // 80). At 128 Q rows without a mask the compiler's order, most exponentials past the wait among
  // dS^T's work, measured 1.005-1.009x the order the branch keeps.
  static constexpr bool kMaskByBranch = Causal || BlockM < 128;
  // How the consumers meet for dQ = dS K, which reads both warpgroups' rows of dS^T: in lockstep
  // (a barrier each step, then this step's dQ) or lagged (each computes the last step's dQ,
  // whose dS^T both stored a step ago: neither waits for the other's step; the dS^T slots
  // become a full/empty ring).
  static constexpr bool kLaggedDq = LaggedDq;
  // CTA pairs: a cluster of two CTAs owns two neighbouring K/V tiles of a head and walks the same Q
  // tiles, each loading half of every step's Q and dO for both (TMA multicast): half the L2 reads
  // of Q and dO. The kernel entry then carries __cluster_dims__(2, 1, 1).
  static constexpr int kClusterCtas = CtaPairs ? 2 : 1;
  // The schedule's last partial wave split into parts whose dK and dV are summed
  // (backward_last_wave, where backward_splits_last_wave says).
  static constexpr bool kSplitsLastWave =
      backward_splits_last_wave(Causal, DeterministicDq, Swizzle == TileSwizzle::head_groups);
  // Who adds a step's dQ into the workspace's accumulator: the dQ writer's warp, one bulk
  // reduction a warpgroup's part from shared memory, or (atomic dQ only) each consumer thread from
  // its registers, 16 bytes a vector reduction, with no writer and no hand-over.
  static constexpr bool kDqFromRegisters = DqFromRegisters;
  // Who reads each of dynamic persistence's tiles from the queue: every consumer thread, the
  // producer and, where there is one, the dQ writer's warp (which walks the tiles itself,
  // backward_kernel_ws.cuh).
  static constexpr int kTileReaders =
      BackwardWsRoles<HeadDim, BlockM, Stages>::kConsumerThreads + 1 + (DqFromRegisters ? 0 : 32);
  // Two dS^T slots, so that a step writes one while the other warpgroup's dQ of the last step
  // may still read the other (BackwardWsBarriers::ds_slots).
  static constexpr int kDsStages = 2;
  // dQ of a step in fp32, as the workspace's accumulator keeps a Q tile (DqFragmentLayout: each
  // consumer thread's registers 16 bytes at a time, in thread order), each warpgroup's part
  // added by one bulk reduction from the shared buffer, which kDqFromRegisters does without.
  using DqLayout = DqFragmentLayout<HeadDim, BlockM>;
  static constexpr int kDqBytes = DqFromRegisters ? 0 : BlockM * HeadDim * 4;
  static constexpr int kListBytes = BlockM * 4;  // a step's L * log2(e), or its delta

  static constexpr int kKOffset = 0;
  static constexpr int kVOffset = Step::kKvBytes;
  static constexpr int kQOffset = 2 * Step::kKvBytes;
  static constexpr int kDoOffset = kQOffset + Stages * Step::kQBytes;
  static constexpr int kDsOffset = kDoOffset + Stages * Step::kQBytes;
  static constexpr int kDqOffset = kDsOffset + kDsStages * Step::kDsBytes;
  static constexpr int kLseOffset = kDqOffset + kDqBytes;
  static constexpr int kDeltaOffset = kLseOffset + Stages * kListBytes;
  static constexpr int kBarrierOffset = kDeltaOffset + Stages * kListBytes;
  static constexpr int kBarrierBytes = 512;
  // + 1024: the dynamic shared memory is aligned up to the swizzle repeat by the kernel.
  static constexpr int kSharedBytes = kBarrierOffset + kBarrierBytes + 1024;

  static_assert(DqLayout::kByRows == Step::kDqByRows && DqLayout::kColumns == Step::kDqColumns &&
                    DqLayout::kTransposed == Step::kDqTransposed,
                "the accumulator layout splits dQ as the consumers do");
  static_assert(BlockM + HeadDim <= 208, "S^T, dP^T, dK and dV in a consumer's registers");
  static_assert(Stages >= 1 && Stages <= 3, "Q/dO pipeline depth 1..3");
  static_assert(!CtaPairs || (Persist == Persistence::grid && !DeterministicDq),
                "CTA pairs take a grid's tiles, and add dQ atomically");
  static_assert(!DqFromRegisters || !DeterministicDq,
                "deterministic dQ is added in K/V-tile order by the writer");
  static_assert(kSharedBytes <= 232448, "sm_90 opt-in shared memory per block");
};

}  // namespace sm90
}  // namespace attention
}  // namespace swr
