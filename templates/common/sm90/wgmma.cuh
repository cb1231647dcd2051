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
// 62-63 swizzle mode (1 = 128-byte, 2 = 64-byte, 3 = 32-byte swizzle). Each tile must start on
// its swizzle's repeat (8 rows of the swizzle span: 1024, 512 or 256 bytes; base offset 0).
__device__ __forceinline__ unsigned long long make_smem_desc(const void* tile, unsigned lbo,
                                                             unsigned sbo, unsigned swizzle_mode) {
  const unsigned long long address = smem_u32(tile);
  return ((address & 0x3FFFF) >> 4) | (static_cast<unsigned long long>(lbo >> 4) << 16) |
         (static_cast<unsigned long long>(sbo >> 4) << 32) |
         (static_cast<unsigned long long>(swizzle_mode) << 62);
}

// The descriptor of the same operand `bytes` further on (a k16 step, the next chunk): only the
// start-address field moves, and a shared-memory address >> 4 stays below 2^14, so a plain 64-bit
// add never carries out of the field. A wgmma loop that advances one descriptor spends about two
// uniform instructions per wgmma; rebuilding it from the address cost about ten, and adding to
// the low word alone then splicing the high word back four to six (the compiler rematerialized
// the constant fields).
__device__ __forceinline__ unsigned long long advance_desc(unsigned long long desc,
                                                           unsigned bytes) {
  return desc + (bytes >> 4);
}

// The same descriptor, with nothing known about its bits: advancing it is then one 64-bit add a
// wgmma operand. Where the compiler can see that a k16 step's offset falls on zero bits of the
// start address (a 1024-byte aligned tile), it ORs the offset into the low word instead, and then
// re-materializes the constant high word before every wgmma: four uniform instructions an SS
// wgmma instead of two.
__device__ __forceinline__ unsigned long long opaque_desc(unsigned long long desc) {
  asm("" : "+l"(desc));
  return desc;
}

// The descriptor's swizzle mode for rows of `swizzle_bytes` (128, 64 or 32).
template <int SwizzleBytes>
__device__ __forceinline__ constexpr unsigned swizzle_mode() {
  static_assert(SwizzleBytes == 128 || SwizzleBytes == 64 || SwizzleBytes == 32,
                "wgmma swizzles rows of 128, 64 or 32 bytes");
  return SwizzleBytes == 128 ? 1u : SwizzleBytes == 64 ? 2u : 3u;
}

// K-major operand in swizzled rows of SwizzleBytes (as TMA writes a {SwizzleBytes / 2, rows} box
// with that swizzle): 8-row atoms of 8 * SwizzleBytes (SBO); LBO unused (a k16 step is 32 bytes,
// never wider than a row). Step k16 by +32 bytes inside a row, by a chunk to the next row width.
template <int SwizzleBytes>
__device__ __forceinline__ unsigned long long make_desc_kmajor(const void* tile) {
  return make_smem_desc(tile, 16, 8 * SwizzleBytes, swizzle_mode<SwizzleBytes>());
}
__device__ __forceinline__ unsigned long long make_desc_kmajor_sw128(const void* tile) {
  return make_desc_kmajor<128>(tile);
}

// MN-major operand (swr's row-major B [K][N]) loaded as chunks of [k rows][SwizzleBytes / 2 n]
// swizzled, chunks `chunk_bytes` apart: LBO = chunk stride (next n atom), SBO = next 8 k rows
// (8 * SwizzleBytes). Step k16 by +16 rows (16 * SwizzleBytes bytes). Verified on H200 with
// 128-byte rows and LBO 8192 (64-k chunks); the 64- and 32-byte forms are CUTLASS's B64/B32
// MN-major canonical layouts.
template <int SwizzleBytes>
__device__ __forceinline__ unsigned long long make_desc_mnmajor(const void* tile,
                                                                unsigned chunk_bytes) {
  return make_smem_desc(tile, chunk_bytes, 8 * SwizzleBytes, swizzle_mode<SwizzleBytes>());
}
__device__ __forceinline__ unsigned long long make_desc_mnmajor_sw128(const void* tile,
                                                                      unsigned chunk_bytes) {
  return make_desc_mnmajor<128>(tile, chunk_bytes);
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
// The same for `Count` accumulators, and for `Count` packed A-operand registers of an RS wgmma
// (which must stay as they are until the wgmma that reads them has completed).
template <int Count>
__device__ __forceinline__ void fence_floats(float* x) {
#pragma unroll
  for (int i = 0; i < Count; ++i) fence_register(x[i]);
}
template <int Count>
__device__ __forceinline__ void fence_words(unsigned* x) {
#pragma unroll
  for (int i = 0; i < Count; ++i) asm volatile("" : "+r"(x[i])::"memory");
}

}  // namespace sm90
}  // namespace swr
