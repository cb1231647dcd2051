// The deterministic dQ's order: a Q tile's shares of dQ are added by the K/V tiles one after
// another, in K/V-tile order, each CTA waiting on the tile's semaphore (the workspace's, zeroed by
// the preprocess) until the tiles before it have added theirs. Both instruction paths' kernels
// call these with every thread of the CTA.
#pragma once

namespace swr {
namespace attention {

// Waits until `count` K/V tiles have added to a Q tile's dQ (the deterministic order), then lets
// the whole CTA go on; signal_dq_added counts this one in once every thread's adds are visible.
__device__ __forceinline__ void wait_for_dq_turn(const int* semaphore, int count) {
  if (threadIdx.x == 0) {
    int seen;
    do {
      asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(seen) : "l"(semaphore));
    } while (seen < count);  // it never passes count before this CTA adds (count + 1 waits)
  }
  __syncthreads();
}
__device__ __forceinline__ void signal_dq_added(int* semaphore) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(semaphore, 1);
}

}  // namespace attention
}  // namespace swr
