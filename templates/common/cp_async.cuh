// Asynchronous global -> shared copies (sm_80+), 16 bytes per thread, zero-filling masked rows.
#pragma once

#include "common/shared_address.cuh"

namespace swr {

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

}  // namespace swr
