// The PTX instructions the kernels issue as inline assembly: shared-window addresses, cp.async
// copies, ldmatrix loads, mma.sync products and fp32 reductions into global memory.
#pragma once

#include "common/element.cuh"

namespace swr {

// Generic pointer -> 32-bit shared-window address, as the shared-memory PTX instructions take it.
__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// Asynchronous global -> shared copies (sm_80+), 16 bytes per thread, zero-filling masked rows.
// Copies 16 bytes, or writes 16 zero bytes when !valid (the source is then not read). Zero-filled
// tails keep 0 * garbage = NaN out of the P·V product.
__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src, bool valid) {
  const int source_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared_dst)),
               "l"(global_src), "r"(source_bytes));
}

// The same, to a 32-bit shared-window address.
__device__ __forceinline__ void cp_async_16(unsigned shared_dst, const void* global_src,
                                            bool valid) {
  const int source_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_dst), "l"(global_src),
               "r"(source_bytes));
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}

// Waits until at most `Pending` of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

// ldmatrix: four 8x8 matrices of 16-bit elements from shared memory into mma fragments.
// Lanes 8i..8i+7 give the row addresses of matrix i; register i receives matrix i.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&fragment)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
               : "r"(shared_address(row_address)));
}

// Transposed: each lane receives a column pair instead of a row pair (V as the B operand).
__device__ __forceinline__ void ldmatrix_x4_transposed(unsigned (&fragment)[4],
                                                       const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
               : "r"(shared_address(row_address)));
}

// The same, from a 32-bit shared-window address.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&fragment)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
               : "r"(address));
}

__device__ __forceinline__ void ldmatrix_x4_transposed(unsigned (&fragment)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
               : "r"(address));
}

// stmatrix (sm_90+): four 8x8 matrices of 16-bit elements from mma fragments (register i:
// matrix i, a row pair per lane, as an accumulator's n8 block holds it) into shared memory, each
// matrix's row j written as the 16 bytes whose address lane 8i + j gives. No "memory" clobber:
// what reads the tile is a wgmma after a fence and a barrier (volatile asm, kept in order), and the
// clobber would pin the shared-memory loads around it (a kernel spilled).
__device__ __forceinline__ void stmatrix_x4(unsigned address, const unsigned (&fragment)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(address),
               "r"(fragment[0]), "r"(fragment[1]), "r"(fragment[2]), "r"(fragment[3]));
}

// stmatrix (sm_90+), transposed: four 8x8 matrices of 16-bit elements from mma fragments
// (register i: matrix i, a row pair per lane) into shared memory, each matrix's column j written
// as the 16-byte row whose address lane 8i + j gives.
__device__ __forceinline__ void stmatrix_x4_transposed(unsigned address,
                                                       const unsigned (&fragment)[4]) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(address),
      "r"(fragment[0]), "r"(fragment[1]), "r"(fragment[2]), "r"(fragment[3])
      : "memory");
}

// Tensor-core multiply-accumulate, mma.sync m16n8k16 with fp32 accumulators (sm_80+).
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), lane = 4 * group + quad:
//   A 16x16: a0 (row group, k 2quad..+1), a1 (row group+8), a2 (row group, k+8), a3 (row group+8,
//   k+8) B 16x8 : b0 (k 2quad..+1, col group), b1 (k+8) C 16x8 : c0,c1 (row group, cols 2quad..+1),
//   c2,c3 (row group+8)
// Not volatile: a pure function of its operands, so the compiler may interleave it with the loads.
template <Element E>
__device__ __forceinline__ void mma_16x8x16(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                            unsigned b1) {
  if constexpr (E == Element::f16) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// 16 bytes to global memory in one store: `sixteen` 16-byte aligned. (Written as a uint4 store,
// the compiler split some of a row's stores into four.)
__device__ __forceinline__ void store_sixteen(void* sixteen, unsigned a, unsigned b, unsigned c,
                                              unsigned d) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(sixteen), "r"(a), "r"(b), "r"(c),
               "r"(d)
               : "memory");
}

// 16 bytes of global memory read once: marked evict-first, so that the L2 keeps what is read
// again instead.
__device__ __forceinline__ float4 load_sixteen_once(const void* sixteen) {
  float4 value;
  asm("ld.global.cs.v4.f32 {%0, %1, %2, %3}, [%4];\n"
      : "=f"(value.x), "=f"(value.y), "=f"(value.z), "=f"(value.w)
      : "l"(sixteen));
  return value;
}

// four[0..3] += values[0..3], each atomically, nothing returned; `four` global and 16-byte aligned.
// From sm_90 one vector reduction: one request to L2 instead of four (the backward's dQ
// accumulation issues these by the million; measured on the H200, vectors of two already took
// 13-28% off the backward).
__device__ __forceinline__ void reduce_add_four(float* four, const float (&values)[4]) {
#if __CUDA_ARCH__ >= 900
  // No "memory" clobber: nothing in a kernel reads what it reduces into (fences order it where
  // that matters), and the clobber would pin the shared-memory loads around it.
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(four), "f"(values[0]),
               "f"(values[1]), "f"(values[2]), "f"(values[3]));
#else
#pragma unroll
  for (int i = 0; i < 4; ++i) atomicAdd(four + i, values[i]);
#endif
}

}  // namespace swr
