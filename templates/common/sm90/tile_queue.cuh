// A queue of tile indices from one producer thread to the consumer warpgroups of a
// warp-specialized CTA, for dynamic persistence: the producer claims tiles from a global counter
// and must tell the consumers which one it loads, but __syncthreads cannot run inside the role
// branches. Each slot is an int guarded by a full/empty mbarrier pair; entry n uses slot
// n % Depth in round n / Depth, so both sides find a slot's parity from the entry number alone.
// mbarrier.arrive releases and try_wait acquires (CTA scope), which orders the int itself.
#pragma once

#include "common/sm90/mbarrier.cuh"

namespace swr {
namespace sm90 {

template <int Depth>
struct TileQueue {
  unsigned long long full[Depth];
  unsigned long long empty[Depth];
  int entry[Depth];

  // One thread; then mbarrier_init_fence() and a block-wide barrier before first use.
  // `readers`: threads that pop every entry (each arrives on `empty` once per entry).
  __device__ __forceinline__ void init(unsigned readers) {
#pragma unroll
    for (int s = 0; s < Depth; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], readers);
    }
  }
  // Producer: publish entry n once every reader has popped entry n - Depth from its slot (a
  // fresh barrier passes parity 1 at once, hence the ^ 1 for the first round).
  __device__ __forceinline__ void push(int n, int value) {
    wait_free(n);
    publish(n, value);
  }
  // push in two halves, for a producer that decides the value only once the slot is free (a
  // dynamic scheduler claims its next tile then, not an entry earlier).
  __device__ __forceinline__ void wait_free(int n) {
    mbarrier_wait(&empty[n % Depth], ((n / Depth) & 1) ^ 1u);
  }
  __device__ __forceinline__ void publish(int n, int value) {
    entry[n % Depth] = value;
    mbarrier_arrive(&full[n % Depth]);
  }
  // Every reader: entry n, then free its slot.
  __device__ __forceinline__ int pop(int n) {
    const int value = peek(n);
    release(n);
    return value;
  }
  // pop in two halves, for a reader that holds the entry while it works on it: the producer
  // learns of entry n + Depth only once this reader has released entry n.
  __device__ __forceinline__ int peek(int n) {
    const int slot = n % Depth;
    mbarrier_wait(&full[slot], (n / Depth) & 1);
    return entry[slot];
  }
  __device__ __forceinline__ void release(int n) {
    mbarrier_arrive(&empty[n % Depth]);
  }
};

}  // namespace sm90
}  // namespace swr
