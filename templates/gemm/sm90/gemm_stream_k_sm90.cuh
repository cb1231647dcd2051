// The stream-K fixup of the wgmma GEMM (schedule: gemm/stream_k.cuh): a contributor consumer
// warpgroup publishes its fp32 partial sums, the finisher's warpgroup collects them before its
// epilogue. Each consumer warpgroup of a cooperative CTA owns its rows of the tile, so the two
// warpgroups publish and collect independently.
//
// Scratch (the kernel's `tile_counter` argument under stream-K), for a grid of G CTAs:
//   int   flags[round_up(G * kConsumers, 4)]    zeroed before each launch; flag (cta, consumer)
//                                              becomes 1 once that warpgroup's partial is written
//   float slots[G][BlockM * BlockN]            CTA b's partial (a unit has at most one), in the
//                                              accumulators' own order: float4 q of thread t of
//                                              consumer c at ((c * kQuads + q) * 128 + t) * 4.
// The flag's release (red.release.gpu after every thread's writes and a barrier) and the
// finisher's acquire (ld.acquire.gpu, then a barrier) order the slot between the CTAs.
#pragma once

#include "common/sm90/warpgroup.cuh"
#include "gemm/sm90/gemm_traits_sm90.cuh"

namespace swr {
namespace gemm {
namespace sm90 {

template <class T>
struct StreamKScratch {
  static constexpr int kQuads = T::kWgSlices * T::kAccumulators / 4;  // float4s per thread
  int* flags;
  float4* slots;

  __device__ __forceinline__ explicit StreamKScratch(int* scratch) {
    const int flag_count = (static_cast<int>(gridDim.x) * T::kConsumers + 3) / 4 * 4;
    flags = scratch;
    slots = reinterpret_cast<float4*>(scratch + flag_count);
  }
  __device__ __forceinline__ int* flag(int cta, int consumer) const {
    return flags + cta * T::kConsumers + consumer;
  }
  __device__ __forceinline__ float4* part(int cta, int consumer) const {
    return slots + (static_cast<long long>(cta) * T::kConsumers + consumer) * kQuads *
                       ::swr::sm90::kWarpgroupThreads;
  }
};

// This CTA's partial of its contributor item, then its flag.
template <class T>
__device__ __forceinline__ void stream_k_publish(const float (&acc)[T::kWgSlices][T::kAccumulators],
                                                 const StreamKScratch<T>& scratch, int consumer) {
  using namespace ::swr::sm90;
  const int thread = threadIdx.x % kWarpgroupThreads;
  float4* part = scratch.part(static_cast<int>(blockIdx.x), consumer);
#pragma unroll
  for (int q = 0; q < StreamKScratch<T>::kQuads; ++q) {
    const int slice = 4 * q / T::kAccumulators, i = 4 * q % T::kAccumulators;
    __stcg(&part[q * kWarpgroupThreads + thread],
           make_float4(acc[slice][i], acc[slice][i + 1], acc[slice][i + 2], acc[slice][i + 3]));
  }
  __threadfence();
  named_barrier_sync(barrier_id::kConsumer0 + consumer, kWarpgroupThreads);
  if (thread == 0) {
    asm volatile("red.release.gpu.global.add.s32 [%0], 1;" ::"l"(
                     scratch.flag(static_cast<int>(blockIdx.x), consumer))
                 : "memory");
  }
}

// The finisher: wait for every contributor unit after it (finisher + 1 .. last_unit; their CTA of
// this cluster rank) and add their partials to `acc`.
template <class T>
__device__ __forceinline__ void stream_k_collect(float (&acc)[T::kWgSlices][T::kAccumulators],
                                                 const StreamKScratch<T>& scratch, int consumer,
                                                 int finisher, int last_unit, int rank) {
  using namespace ::swr::sm90;
  const int thread = threadIdx.x % kWarpgroupThreads;
  if (thread == 0) {
    for (int unit = finisher + 1; unit <= last_unit; ++unit) {
      const int* flag = scratch.flag(unit * T::kClusterSize + rank, consumer);
      int ready = 0;
      while (true) {
        asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(ready) : "l"(flag) : "memory");
        if (ready != 0) break;
        __nanosleep(64);
      }
    }
  }
  named_barrier_sync(barrier_id::kConsumer0 + consumer, kWarpgroupThreads);
  // Groups of kGroup quads: each group's loads from one contributor are independent and in
  // flight together (a load per quad and contributor in turn waited out one L2 latency each,
  // 32 x contributors of them), and only the group's accumulators are carried around the runtime
  // loop over contributors (all 128 made ptxas spill).
  const float4* first = scratch.part((finisher + 1) * T::kClusterSize + rank, consumer) + thread;
  // float4s from one unit's slot to the next unit's (32-bit: a 64-bit stride made ptxas spill).
  constexpr int stride =
      T::kClusterSize * T::kConsumers * StreamKScratch<T>::kQuads * kWarpgroupThreads;
  // (A BlockN that is not a multiple of 64 ends in a shorter group: 176 columns are 22 quads.)
  constexpr int kGroup = 8;
  constexpr int kQuads = StreamKScratch<T>::kQuads;
  const int others = last_unit - finisher;
#pragma unroll
  for (int group = 0; group < kQuads; group += kGroup) {
    const int size = kQuads - group < kGroup ? kQuads - group : kGroup;  // a constant, unrolled
    for (int other = 0; other < others; ++other) {
      float4 v[kGroup];
#pragma unroll
      for (int g = 0; g < kGroup; ++g)
        if (g < size) v[g] = __ldcg(first + other * stride + (group + g) * kWarpgroupThreads);
#pragma unroll
      for (int g = 0; g < kGroup; ++g) {
        if (g >= size) continue;
        const int q = group + g;
        const int slice = 4 * q / T::kAccumulators, i = 4 * q % T::kAccumulators;
        acc[slice][i] += v[g].x;
        acc[slice][i + 1] += v[g].y;
        acc[slice][i + 2] += v[g].z;
        acc[slice][i + 3] += v[g].w;
      }
    }
  }
}

}  // namespace sm90
}  // namespace gemm
}  // namespace swr
