// How one output tile is computed: C[tile] = A[rows, :] · B[:, cols] over K in BlockK steps,
// staged through shared memory by a cp.async pipeline kStages deep; warp_tile.cuh does the math.
// Which tile, and in which order, is the schedule's business (block_swizzle.cuh).
#pragma once

#include "common/ptx.cuh"
#include "gemm/operand_copy.cuh"
#include "gemm/warp_tile.cuh"

namespace swr {
namespace gemm {

template <class T>
struct Mainloop {
  using Warp = WarpTile<T>;
  using CopyA = OperandCopy<T::kThreads, T::kBlockM, T::kBlockK>;
  using CopyB = OperandCopy<T::kThreads, T::kBlockK, T::kBlockN>;
  static constexpr int kStages = T::kStages;
  static constexpr unsigned kStageBytes = T::kStageBytes;
  static constexpr unsigned kBOffset = Warp::ATile::kBytes;  // B follows A within a stage

  unsigned shared;  // shared-window address of stage 0
  CopyA copy_a;
  CopyB copy_b;

  __device__ explicit Mainloop(const void* shared_memory) : shared(shared_address(shared_memory)) {}

  // Issues the copies of k tile `k_tile` into pipeline slot `slot`.
  __device__ __forceinline__ void load_stage(int slot, int k_tile, const unsigned short* a,
                                             const unsigned short* b, int row0, int col0, int m,
                                             int n, int k) const {
    const unsigned stage = shared + slot * kStageBytes;
    const int k0 = k_tile * T::kBlockK;
    copy_a(stage, a, k, row0, k0, m, k);
    copy_b(stage + kBOffset, b, n, k0, col0, k, n);
  }

  // Rows [row0, row0 + BlockM) and columns [col0, col0 + BlockN) of C = A · B; A [m x k], B [k x n]
  // and C [m x n] row-major.
  //
  // Copies for k tile t go to slot t % kStages. Within k tile t the warps walk its k16 steps; the
  // refill of the slot t - 1 used is issued over the first two steps (A, then B), so the copy
  // instructions interleave with tensor-core work instead of stalling it in one burst. The barrier
  // that makes tile t + 1 visible comes before the last step's mma, whose fragments are already in
  // registers: the next stage's first fragments load while those mma run, so neither the barrier
  // nor ldmatrix latency leaves the tensor cores idle.
  __device__ void compute(const unsigned short* a, const unsigned short* b, unsigned short* c,
                          int row0, int col0, int m, int n, int k) {
    constexpr int kSteps = Warp::kSteps;
    constexpr int kCopyBStep = kSteps > 1 ? 1 : 0;
    const int lane = threadIdx.x % 32;
    Warp warp;
    warp.start(threadIdx.x / 32, lane);
    const int k_tiles = (k + T::kBlockK - 1) / T::kBlockK;

    // A persistent CTA's previous tile may still be reading the slots refilled here.
    __syncthreads();
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < k_tiles) load_stage(s, s, a, b, row0, col0, m, n, k);
      cp_async_commit();  // empty groups keep the wait counts below uniform
    }
    cp_async_wait<kStages - 2>();
    __syncthreads();

    int read_slot = 0;
    int write_slot = kStages - 1;
    unsigned stage = shared;
    warp.load_fragments(stage, stage + kBOffset, 0, 0);
    for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
      const int next = k_tile + kStages - 1;
      const unsigned refill = shared + write_slot * kStageBytes;
#pragma unroll
      for (int step = 0; step < kSteps; ++step) {
        if (step == 0 && next < k_tiles) copy_a(refill, a, k, row0, next * T::kBlockK, m, k);
        if (step == kCopyBStep) {
          if (next < k_tiles) copy_b(refill + kBOffset, b, n, next * T::kBlockK, col0, k, n);
          cp_async_commit();  // one group per k tile, empty near the end
        }
        if (step + 1 < kSteps) {
          warp.load_fragments(stage, stage + kBOffset, step + 1, (step + 1) % 2);
        } else {
          // Tile k_tile + 1 landed (at most kStages - 2 newer groups pending) and is visible to
          // all; every warp has its last fragments of k_tile, so the next refill may overwrite it.
          cp_async_wait<kStages - 2>();
          __syncthreads();
          read_slot = read_slot + 1 == kStages ? 0 : read_slot + 1;
          write_slot = write_slot + 1 == kStages ? 0 : write_slot + 1;
          stage = shared + read_slot * kStageBytes;
          if (k_tile + 1 < k_tiles) warp.load_fragments(stage, stage + kBOffset, 0, 0);
        }
        warp.multiply(step % 2);  // kSteps is even: step 0 always uses set 0
      }
    }
    cp_async_wait<0>();
    warp.store(c, row0, col0, m, n, lane);
  }
};

}  // namespace gemm
}  // namespace swr
