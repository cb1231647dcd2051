// A step's BlockM values of L * log2(e) and of delta, from the workspace's lists (the preprocess's,
// padded to whole Q tiles, so a step's values are always in bounds) into shared memory: one
// 16-byte cp.async each by the CTA's first BlockM / 2 threads. Both instruction paths' kernels
// stage them so, in the cp.async group of the step's Q and dO tiles, into their tiles' slot
// `slot` (Tiles: lse_log2(slot) and delta(slot), BlockM floats each).
#pragma once

#include "attention/backward/backward_args.cuh"
#include "common/ptx.cuh"

namespace swr {
namespace attention {

template <int BlockM, class Tiles>
__device__ __forceinline__ void copy_step_lists_async(const Tiles& tiles, int slot,
                                                      const BackwardArgs& args, int batch, int head,
                                                      int q_row0) {
  const long long list = workspace_row(args, batch, head) + q_row0;
  constexpr int kChunks = BlockM / 4;  // 16-byte chunks of one list
  if (threadIdx.x < 2 * kChunks) {
    const bool is_delta = threadIdx.x >= kChunks;
    const int chunk = threadIdx.x - (is_delta ? kChunks : 0);
    const float* source =
        (is_delta ? args.workspace.delta : args.workspace.lse_log2) + list + 4 * chunk;
    float* destination = (is_delta ? tiles.delta(slot) : tiles.lse_log2(slot)) + 4 * chunk;
    cp_async_16(destination, source, true);
  }
}

}  // namespace attention
}  // namespace swr
