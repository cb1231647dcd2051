// Tensor-core multiply-accumulate, mma.sync m16n8k16 with fp32 accumulators (sm_80+).
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), lane = 4 * group + quad:
//   A 16x16: a0 (row group, k 2quad..+1), a1 (row group+8), a2 (row group, k+8), a3 (row group+8,
//   k+8) B 16x8 : b0 (k 2quad..+1, col group), b1 (k+8) C 16x8 : c0,c1 (row group, cols 2quad..+1),
//   c2,c3 (row group+8)
#pragma once

#include "common/element.cuh"

namespace swr {

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

}  // namespace swr
