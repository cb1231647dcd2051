// How one output tile is computed: C[tile] = A[rows, :] · B[:, cols] over K in BlockK steps,
// staged through shared memory by a cp.async pipeline kStages deep; warp_tile.cuh does the math.
// Which tile, and in which order, is the schedule's business (gemm_tile_schedule.cuh).
#pragma once

#include "common/cp_async.cuh"
#include "common/shared_address.cuh"
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
  __device__ void compute(const unsigned short* a, const unsigned short* b, unsigned short* c,
                          int row0, int col0, int m, int n, int k) {
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

    int read_slot = 0;
    int write_slot = kStages - 1;
    for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
      cp_async_wait<kStages - 2>();
      // Stage k_tile is visible to all, and every warp is done with k_tile - 1, whose slot is
      // the one refilled now.
      __syncthreads();
      const int next = k_tile + kStages - 1;
      if (next < k_tiles) load_stage(write_slot, next, a, b, row0, col0, m, n, k);
      cp_async_commit();

      const unsigned stage = shared + read_slot * kStageBytes;
      warp.multiply(stage, stage + kBOffset);
      read_slot = read_slot + 1 == kStages ? 0 : read_slot + 1;
      write_slot = write_slot + 1 == kStages ? 0 : write_slot + 1;
    }
    cp_async_wait<0>();
    warp.store(c, row0, col0, m, n, lane);
  }
};

}  // namespace gemm
}  // namespace swr
