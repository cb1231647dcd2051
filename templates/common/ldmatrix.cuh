// ldmatrix: four 8x8 matrices of 16-bit elements from shared memory into mma fragments.
// Lanes 8i..8i+7 give the row addresses of matrix i; register i receives matrix i.
#pragma once

#include "common/shared_address.cuh"

namespace swr {

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

}  // namespace swr
