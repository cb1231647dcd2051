// Warpgroup MMA (PTX ISA "wgmma.mma_async", sm_90a): shared-memory matrix descriptors,
// fence/commit/wait, and the m64nNk16 SS instructions for fp16/bf16 with fp32 accumulation.
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

// --- m64nNk16 SS instructions -------------------------------------------------------------------
// Operand lists are spelled out by macros: N/2 accumulators "+f"(d[i]) then the two descriptors,
// scale-d (0 zeroes the accumulators: the first k step of a tile) and the transpose-B immediate.

// clang-format off
#define SWR_SM90_D4(b) "+f"(d[(b)]), "+f"(d[(b) + 1]), "+f"(d[(b) + 2]), "+f"(d[(b) + 3])
#define SWR_SM90_D16(b) SWR_SM90_D4(b), SWR_SM90_D4((b) + 4), SWR_SM90_D4((b) + 8), SWR_SM90_D4((b) + 12)
#define SWR_SM90_D32(b) SWR_SM90_D16(b), SWR_SM90_D16((b) + 16)
#define SWR_SM90_D64(b) SWR_SM90_D32(b), SWR_SM90_D32((b) + 32)
#define SWR_SM90_D96(b) SWR_SM90_D64(b), SWR_SM90_D32((b) + 64)
#define SWR_SM90_D128(b) SWR_SM90_D64(b), SWR_SM90_D64((b) + 64)

#define SWR_SM90_ACC_REGS_32 \
    "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"

#define SWR_SM90_ACC_REGS_64 \
    "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
    "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"

#define SWR_SM90_ACC_REGS_96 \
    "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
    "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63," \
    "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79," \
    "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95"

#define SWR_SM90_ACC_REGS_128 \
    "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
    "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63," \
    "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79," \
    "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95," \
    "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111," \
    "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"

// N accumulators, REGS the "%0,...%(N-1)" list, A/B/S/T the operand numbers of desc A, desc B,
// scale-d and trans-B.
#define SWR_SM90_WGMMA_SS(N, ACC, REGS, A, B, S, T, TYPE)                                    \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #S ", 0;\n"                               \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " {" REGS "}, " \
               "%" #A ", %" #B ", p, 1, 1, 0, %" #T ";\n}\n"                                  \
               : ACC(0)                                                                       \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TransB))
// clang-format on

// d[N/2] += A(64x16, desc_a) * B(16xN, desc_b); scale_d == 0 overwrites d. TransB = 1 for an
// MN-major B (swr's row-major B), 0 for K-major.
template <int N, Element E, int TransB>
__device__ __forceinline__ void wgmma_ss(float* d, unsigned long long desc_a,
                                         unsigned long long desc_b, int scale_d) {
  static_assert(N == 64 || N == 128 || N == 192 || N == 256, "instantiated N: 64, 128, 192, 256");
  if constexpr (N == 64) {
    if constexpr (E == Element::f16) {
      SWR_SM90_WGMMA_SS(64, SWR_SM90_D32, SWR_SM90_ACC_REGS_32, 32, 33, 34, 35, "f16");
    } else {
      SWR_SM90_WGMMA_SS(64, SWR_SM90_D32, SWR_SM90_ACC_REGS_32, 32, 33, 34, 35, "bf16");
    }
  } else if constexpr (N == 128) {
    if constexpr (E == Element::f16) {
      SWR_SM90_WGMMA_SS(128, SWR_SM90_D64, SWR_SM90_ACC_REGS_64, 64, 65, 66, 67, "f16");
    } else {
      SWR_SM90_WGMMA_SS(128, SWR_SM90_D64, SWR_SM90_ACC_REGS_64, 64, 65, 66, 67, "bf16");
    }
  } else if constexpr (N == 192) {
    if constexpr (E == Element::f16) {
      SWR_SM90_WGMMA_SS(192, SWR_SM90_D96, SWR_SM90_ACC_REGS_96, 96, 97, 98, 99, "f16");
    } else {
      SWR_SM90_WGMMA_SS(192, SWR_SM90_D96, SWR_SM90_ACC_REGS_96, 96, 97, 98, 99, "bf16");
    }
  } else {
    if constexpr (E == Element::f16) {
      SWR_SM90_WGMMA_SS(256, SWR_SM90_D128, SWR_SM90_ACC_REGS_128, 128, 129, 130, 131, "f16");
    } else {
      SWR_SM90_WGMMA_SS(256, SWR_SM90_D128, SWR_SM90_ACC_REGS_128, 128, 129, 130, 131, "bf16");
    }
  }
}

}  // namespace sm90
}  // namespace swr
