// The deterministic dQ's order: a Q tile's shares of dQ are added by the K/V tiles one after
// another, in K/V-tile order, each CTA waiting on the tile's semaphore (the workspace's, zeroed by
// the preprocess) until the tiles before it have added theirs. The mma.sync and the older wgmma
// kernels call these with every thread of the CTA; the warp-specialized one's dQ writer spins
// alone.
#pragma once

namespace swr {
namespace attention {

// One thread waits until `count` K/V tiles have added to a Q tile's dQ (the deterministic order).
// The count never passes `count` before the caller's tile adds (the next tile waits for count + 1).
__device__ __forceinline__ void spin_until_dq_turn(const int* semaphore, int count) {
  int seen;
  do {
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(seen) : "l"(semaphore));
  } while (seen < count);
}
// The whole CTA waits for its turn; signal_dq_added counts this tile in once every thread's adds
// are visible.
__device__ __forceinline__ void wait_for_dq_turn(const int* semaphore, int count) {
  if (threadIdx.x == 0) spin_until_dq_turn(semaphore, count);
  __syncthreads();
}
__device__ __forceinline__ void signal_dq_added(int* semaphore) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(semaphore, 1);
}

}  // namespace attention
}  // namespace swr
