// A ring of `Stages` slots guarded by full/empty mbarriers (the TMA warp-specialized pattern of
// CUTLASS's PipelineTmaAsync, reduced to its state): a producer waits `empty[slot]`, fills the
// slot and the copy engine arrives on `full[slot]`; consumers wait `full[slot]`, read it, arrive on
// `empty[slot]`. Both sides walk the same sequence of slots, so each keeps its own state.
#pragma once

#include "common/sm90/mbarrier.cuh"

namespace swr {
namespace sm90 {

template <int Stages>
struct PipelineState {
  int index = 0;       // slot
  unsigned phase = 0;  // parity of the slot's current fill round

  __device__ __forceinline__ void advance() {
    if (++index == Stages) {
      index = 0;
      phase ^= 1u;
    }
  }
  // Skip `count` slots (a consumer that does not read another consumer's tiles).
  __device__ __forceinline__ void advance(int count) {
    const int total = index + count;
    phase ^= static_cast<unsigned>(total / Stages) & 1u;
    index = total % Stages;
  }
};

template <int Stages>
struct PipelineBarriers {
  unsigned long long full[Stages];
  unsigned long long empty[Stages];

  // One thread; then mbarrier_init_fence() and a block-wide barrier before first use.
  __device__ __forceinline__ void init(unsigned full_arrivals, unsigned empty_arrivals) {
#pragma unroll
    for (int s = 0; s < Stages; ++s) {
      mbarrier_init(&full[s], full_arrivals);
      mbarrier_init(&empty[s], empty_arrivals);
    }
  }
  // Producer: the slot is free once the consumers released its previous round; a fresh barrier
  // passes parity 1 at once, hence phase ^ 1.
  __device__ __forceinline__ void producer_acquire(const PipelineState<Stages>& state) {
    mbarrier_wait(&empty[state.index], state.phase ^ 1u);
  }
  __device__ __forceinline__ void consumer_wait(const PipelineState<Stages>& state) {
    mbarrier_wait(&full[state.index], state.phase);
  }
  __device__ __forceinline__ void consumer_release(int index) {
    mbarrier_arrive(&empty[index]);
  }
  // Release the slot in every CTA of the cluster whose producer multicasts into it: `peers` has
  // bit r set for CTA rank r (this CTA included), and each of them counts the consumers of all.
  template <int ClusterSize>
  __device__ __forceinline__ void consumer_release_cluster(int index, unsigned peers) {
    if constexpr (ClusterSize == 1) {
      mbarrier_arrive(&empty[index]);
    } else {
#pragma unroll
      for (int rank = 0; rank < ClusterSize; ++rank)
        if (peers >> rank & 1u) mbarrier_arrive_cluster(&empty[index], rank);
    }
  }
};

}  // namespace sm90
}  // namespace swr
