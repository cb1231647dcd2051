// Tensor Memory Accelerator (the bulk tensor copy engine), raw PTX (PTX ISA "cp.async.bulk.tensor",
// "cp.async.bulk.commit_group/wait_group", "prefetch.tensormap"). The descriptor is built on the
// host by cuTensorMapEncodeTiled and passed by value as a `const __grid_constant__` kernel
// parameter; TmaDescriptor mirrors CUtensorMap (CUDA 13.0 cuda.h: 16 x u64, alignas(128)).
// Loads complete on an mbarrier (complete_tx::bytes): the barrier's expect_tx must announce the
// whole box, since out-of-bounds elements are zero-filled and count as transferred bytes.
// Stores clip at the tensor's bounds.
#pragma once

#include "common/sm90/mbarrier.cuh"

namespace swr {
namespace sm90 {

struct alignas(128) TmaDescriptor {
  unsigned long long opaque[16];
};

// L2 eviction-priority policies for .L2::cache_hint (the createpolicy encodings CUTLASS uses,
// cute/arch/copy_sm90_desc.hpp TMA::CacheHintSm90).
constexpr unsigned long long kCacheEvictNormal = 0x1000000000000000ull;
constexpr unsigned long long kCacheEvictFirst = 0x12F0000000000000ull;
constexpr unsigned long long kCacheEvictLast = 0x14F0000000000000ull;

__device__ __forceinline__ unsigned long long generic_u64(const void* pointer) {
  return reinterpret_cast<unsigned long long>(pointer);
}

// Fetch the descriptor into the TMA unit's cache ahead of the first copy.
__device__ __forceinline__ void tma_prefetch_descriptor(const TmaDescriptor* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(generic_u64(map)) : "memory");
}

// 2-D tile load: box at coordinates (c0 innermost, c1) into shared memory `dst`.
__device__ __forceinline__ void tma_load_2d(void* dst, const TmaDescriptor* map,
                                            unsigned long long* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(smem_u32(dst)),
      "l"(generic_u64(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void tma_load_2d_hint(void* dst, const TmaDescriptor* map,
                                                 unsigned long long* bar, int c0, int c1,
                                                 unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_u32(dst)),
      "l"(generic_u64(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "l"(policy)
      : "memory");
}
__device__ __forceinline__ void tma_load_4d(void* dst, const TmaDescriptor* map,
                                            unsigned long long* bar, int c0, int c1, int c2,
                                            int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(smem_u32(dst)),
      "l"(generic_u64(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_load_4d_hint(void* dst, const TmaDescriptor* map,
                                                 unsigned long long* bar, int c0, int c1, int c2,
                                                 int c3, unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%3, %4, %5, %6}], [%2], %7;" ::"r"(smem_u32(dst)),
      "l"(generic_u64(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "l"(policy)
      : "memory");
}

// Multicast: the box lands at the same shared offset in every CTA of the cluster named in
// `cta_mask`, and completes on the barrier at the same offset in each (sm_90a only; ptxas advises
// against .multicast::cluster on plain sm_90).
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const TmaDescriptor* map,
                                                      unsigned long long* bar, int c0, int c1,
                                                      unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_u32(dst)),
      "l"(generic_u64(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(cta_mask)
      : "memory");
}
__device__ __forceinline__ void tma_load_4d_multicast(void* dst, const TmaDescriptor* map,
                                                      unsigned long long* bar, int c0, int c1,
                                                      int c2, int c3, unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4, %5, %6}], [%2], %7;" ::"r"(smem_u32(dst)),
      "l"(generic_u64(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "h"(cta_mask)
      : "memory");
}

// 2-D tile store from shared memory; out-of-bounds parts of the box are not written.
// The shared-memory writes it reads must be made visible to the async proxy first
// (fence_proxy_async_shared in every writing thread, then a barrier).
__device__ __forceinline__ void tma_store_2d(const TmaDescriptor* map, const void* src, int c0,
                                             int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   generic_u64(map)),
               "r"(smem_u32(src)), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Wait until at most N committed store groups still READ shared memory (the buffer is reusable).
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// Wait until at most N committed store groups are incomplete (writes done).
template <int N>
__device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// 1-D bulk copy of `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to
// shared memory, completing on `bar` like a tensor load (PTX ISA "cp.async.bulk"): no tensor map.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes,
                                          unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(smem_u32(dst)),
      "l"(generic_u64(src)), "r"(bytes), "r"(smem_u32(bar))
      : "memory");
}

// dst[i] += src[i] for `bytes` / 4 floats, shared to global, by the copy engine (PTX ISA
// "cp.reduce.async.bulk", bulk_group completion: tma_store_commit / tma_store_wait*). Each element
// is added atomically; the order among concurrent adders is the memory system's.
__device__ __forceinline__ void bulk_reduce_add_f32(float* dst, const void* src, unsigned bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(
                   generic_u64(dst)),
               "r"(smem_u32(src)), "r"(bytes)
               : "memory");
}

// Global writes of the async proxy (a completed bulk reduce) ordered with this thread's later
// generic accesses (the release that tells another CTA it may add next), and back.
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}

// Generic-proxy shared-memory writes -> visible to the async proxy (TMA store, wgmma).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

}  // namespace sm90
}  // namespace swr
