// Warpgroup MMA (PTX ISA "wgmma.mma_async", sm_90a): shared-memory matrix descriptors and
// fence/commit/wait. The m64nNk16 instructions themselves (SS and RS, f16/bf16, every N) are
// generated into common/sm90/wgmma_any_n.cuh by scripts/generate_wgmma.py.
//
// Accumulator layout (verified on H200, notes/hopper-path.md §4): per warp w of the warpgroup,
// 16 rows x N of m16n8 C fragments; register d[4*j + i] of lane l holds
//   row = 16*w + l/4 + 8*(i/2),  col = 8*j + 2*(l%4) + i%2.
#pragma once

#include "common/element.cuh"
#include "common/sm90/mbarrier.cuh"

namespace swr {
namespace sm90 {

// Matrix descriptor (PTX ISA "Matrix Descriptor Format"): bits 0-13 start address >> 4,
// 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension byte offset >> 4,
// 62-63 swizzle mode (1 = 128-byte swizzle). Tiles must sit on 1024-byte boundaries.
__device__ __forceinline__ unsigned long long make_smem_desc(const void* tile, unsigned lbo,
                                                             unsigned sbo) {
  const unsigned long long address = smem_u32(tile);
  return ((address & 0x3FFFF) >> 4) | (static_cast<unsigned long long>(lbo >> 4) << 16) |
         (static_cast<unsigned long long>(sbo >> 4) << 32) | (1ull << 62);
}

// K-major operand in 128B-swizzled rows of 64 16-bit elements (as TMA writes a {64, rows} box
// with SWIZZLE_128B): 8-row atoms of 1024 B (SBO); LBO unused. Step k16 by +32 bytes.
__device__ __forceinline__ unsigned long long make_desc_kmajor_sw128(const void* tile) {
  return make_smem_desc(tile, 16, 1024);
}

// MN-major operand (swr's row-major B [K][N]) loaded as chunks of [64 k][64 n] 128B-swizzled,
// chunks `chunk_bytes` apart: LBO = chunk stride (next 64 n), SBO = 1024 (next 8 k rows).
// Step k16 by +16 rows * 128 B = 2048 bytes. Verified on H200 with LBO 8192 (64-k chunks).
__device__ __forceinline__ unsigned long long make_desc_mnmajor_sw128(const void* tile,
                                                                      unsigned chunk_bytes) {
  return make_smem_desc(tile, chunk_bytes, 1024);
}

// Orders register accesses of the accumulators before the wgmma that reads them.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
// Wait until at most N committed wgmma groups are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keep the compiler from moving accumulator reads/writes across an asynchronous wgmma.
__device__ __forceinline__ void fence_register(float& value) {
  asm volatile("" : "+f"(value)::"memory");
}

}  // namespace sm90
}  // namespace swr
