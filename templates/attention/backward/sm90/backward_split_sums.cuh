// dK and dV of a K/V tile whose walk the schedule split into parts (backward_schedule.cuh's last
// wave): each part's consumer warpgroup adds its 64 rows of both into the workspace's slot
// (backward_args.cuh: split_sums, in the accumulators' own order, float4 q of thread t at
// q * 128 + t, dK's then dV's), and the part that arrives last reads the sums back and stores
// them as a whole tile's warpgroup would. The arrivals count with a device-wide atomic after each
// thread's reductions and a fence; the last arrival fences again before it reads (the pattern of
// CUDA's threadFenceReduction sample). The preprocess zeroes the slots and the counts.
#pragma once

#include "attention/backward/backward_args.cuh"
#include "common/ptx.cuh"
#include "common/sm90/warpgroup.cuh"

namespace swr {
namespace attention {
namespace sm90 {

// True for the last part of `slot` to arrive: dk and dv then hold the sums of every part.
template <class T>
__device__ __forceinline__ bool sum_split_parts(float* dk, float* dv, int slot, int wg,
                                                const BackwardArgs& args) {
  using namespace swr::sm90;
  constexpr int kQuads = T::kHeadDim / 8;  // float4s of dK (or dV) a thread
  const int thread = threadIdx.x % kWarpgroupThreads;
  const int owner = slot * T::kConsumerWgs + wg;
  float4* const sums = reinterpret_cast<float4*>(args.workspace.split_sums) +
                       static_cast<long long>(owner) * 2 * kQuads * kWarpgroupThreads + thread;
  const auto add = [&](const float* accumulator, float4* into) {
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      const float four[4] = {accumulator[4 * q], accumulator[4 * q + 1], accumulator[4 * q + 2],
                             accumulator[4 * q + 3]};
      reduce_add_four(&into[q * kWarpgroupThreads].x, four);
    }
  };
  add(dk, sums);
  add(dv, sums + kQuads * kWarpgroupThreads);
  __threadfence();
  const int barrier = barrier_id::kConsumer0 + wg;
  named_barrier_sync(barrier, kWarpgroupThreads);
  bool last = false;
  if (thread == 0)
    last = atomicAdd(args.workspace.split_arrivals + owner, 1) == args.split_parts - 1;
  if (!named_barrier_or(barrier, kWarpgroupThreads, last)) return false;
  __threadfence();
  const auto read = [&](float* accumulator, const float4* from) {
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      const float4 four = __ldcg(&from[q * kWarpgroupThreads]);
      accumulator[4 * q] = four.x;
      accumulator[4 * q + 1] = four.y;
      accumulator[4 * q + 2] = four.z;
      accumulator[4 * q + 3] = four.w;
    }
  };
  read(dk, sums);
  read(dv, sums + kQuads * kWarpgroupThreads);
  return true;
}

}  // namespace sm90
}  // namespace attention
}  // namespace swr
