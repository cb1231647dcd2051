// Warpgroup-level primitives: register reallocation and named barriers.
#pragma once

namespace swr {
namespace sm90 {

constexpr int kWarpgroupThreads = 128;

// setmaxnreg (PTX ISA "setmaxnreg", sm_90a): a warpgroup gives registers back to the CTA pool
// (dec) or takes them (inc). ptxas honours it only when the kernel has a register cap at entry,
// i.e. __launch_bounds__(threads, 1); otherwise it warns C7508 and ignores it. Every warp of the
// warpgroup must execute it (.sync.aligned). Counts: multiples of 8 in [24, 256].
template <int Registers>
__device__ __forceinline__ void warpgroup_reg_dealloc() {
  static_assert(Registers % 8 == 0 && Registers >= 24 && Registers <= 256, "setmaxnreg range");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}
template <int Registers>
__device__ __forceinline__ void warpgroup_reg_alloc() {
  static_assert(Registers % 8 == 0 && Registers >= 24 && Registers <= 256, "setmaxnreg range");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

// Named barriers (PTX "bar.sync/bar.arrive", 16 per CTA). ID 0 is __syncthreads; every kernel
// of the sm90 family takes its IDs from this one map so that shared device code cannot collide.
namespace barrier_id {
constexpr int kSyncThreads = 0;
constexpr int kConsumer0 = 1;       // consumer warpgroup 0 alone (epilogue staging)
constexpr int kConsumer1 = 2;       // consumer warpgroup 1 alone
constexpr int kOrderConsumer0 = 3;  // pingpong: consumer 0 may issue its mainloop
constexpr int kOrderConsumer1 = 4;  // pingpong: consumer 1 may issue its mainloop
constexpr int kConsumers = 5;       // all consumer warpgroups together
constexpr int kConsumer2 = 6;       // consumer warpgroup 2 alone
constexpr int kOrderConsumer2 = 7;  // pingpong of three: consumer 2 may issue its mainloop
// The attention backward's dQ hand-over (backward_kernel_ws.cuh), a pair a consumer warpgroup:
// `full` once its part of a step's dQ is in shared memory, `empty` once the writer has read it.
constexpr int kDqFull0 = 8;
constexpr int kDqFull1 = 9;
constexpr int kDqEmpty0 = 10;
constexpr int kDqEmpty1 = 11;

// Pingpong's order barrier of consumer warpgroup `consumer` (0, 1 or 2): the warpgroup issues its
// GEMMs once that barrier completes and then arrives on the next one's.
__device__ __forceinline__ int order_consumer(int consumer) {
  return consumer == 0 ? kOrderConsumer0 : consumer == 1 ? kOrderConsumer1 : kOrderConsumer2;
}
}  // namespace barrier_id

// `threads` counts every thread that takes part (a multiple of 32), arrivals included.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// Arrive without waiting: lets another group pass its bar.sync on the same ID.
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// bar.sync that also ORs `predicate` over the threads that take part: each gets the result.
__device__ __forceinline__ bool named_barrier_or(int id, int threads, bool predicate) {
  int any;
  asm volatile(
      "{ .reg .pred p, q; setp.ne.s32 p, %1, 0; bar.red.or.pred q, %2, %3, p; "
      "selp.s32 %0, 1, 0, q; }"
      : "=r"(any)
      : "r"(static_cast<int>(predicate)), "r"(id), "r"(threads)
      : "memory");
  return any != 0;
}

// The warpgroup index of this thread, uniform across the warpgroup (shfl keeps the compiler
// from treating it as divergent).
__device__ __forceinline__ int warpgroup_index() {
  return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / kWarpgroupThreads, 0);
}

}  // namespace sm90
}  // namespace swr
