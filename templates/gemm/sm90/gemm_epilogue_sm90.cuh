// Epilogue of one consumer warpgroup: fp32 accumulators -> 16-bit C staged in 128B-swizzled
// shared memory -> TMA store (clipped at the matrix edge by the copy engine). The store runs
// asynchronously: the warpgroup goes back to its mainloop at once and only waits for the
// previous store to have *read* the staging buffer before overwriting it.
#pragma once

#include "common/element.cuh"
#include "common/sm90/mbarrier.cuh"
#include "common/sm90/tma.cuh"
#include "common/sm90/warpgroup.cuh"

namespace swr {
namespace gemm {
namespace sm90 {

template <class T>
struct EpilogueTma {
  // staging: this warpgroup's BlockN/64 chunks of [kWgRows][64] elements, 128B-swizzled like the
  // TMA box of map_c (16-byte unit u of row r sits at u ^ (r % 8)), so the 4-byte writes of a
  // warp (8 rows x 4 lanes per m16n8 fragment) hit 32 different banks.
  __device__ __forceinline__ static void store(const float (&acc)[T::kWgSlices][T::kAccumulators],
                                               unsigned char* staging,
                                               const ::swr::sm90::TmaDescriptor* map_c,
                                               int consumer, int row0, int col0) {
    using namespace ::swr::sm90;
    const int thread = threadIdx.x % kWarpgroupThreads;
    const int warp = thread / 32, lane = thread % 32;
    const int barrier = barrier_id::kConsumer0 + consumer;
    if (thread == 0) tma_store_wait_read<0>();  // the previous tile's store has read `staging`
    named_barrier_sync(barrier, kWarpgroupThreads);
    const unsigned base = smem_u32(staging);
#pragma unroll
    for (int slice = 0; slice < T::kWgSlices; ++slice) {
      const int row = slice * 64 + warp * 16 + lane / 4;
#pragma unroll
      for (int j = 0; j < T::kBlockN / 8; ++j) {
        const unsigned address = base + (j / 8) * T::kCChunkBytes + row * 128 +
                                 (((j % 8) ^ (row & 7)) << 4) + (lane % 4) * 4;
        const unsigned low = pack_pair<T::kElement>(acc[slice][4 * j], acc[slice][4 * j + 1]);
        const unsigned high = pack_pair<T::kElement>(acc[slice][4 * j + 2], acc[slice][4 * j + 3]);
        asm volatile("st.shared.b32 [%0], %1;" ::"r"(address), "r"(low) : "memory");
        asm volatile("st.shared.b32 [%0], %1;" ::"r"(address + 8 * 128), "r"(high) : "memory");
      }
    }
    fence_proxy_async_shared();  // generic-proxy writes -> visible to the TMA store
    named_barrier_sync(barrier, kWarpgroupThreads);
    if (thread == 0) {
#pragma unroll
      for (int chunk = 0; chunk < T::kBlockN / 64; ++chunk) {
        tma_store_2d(map_c, staging + chunk * T::kCChunkBytes, col0 + chunk * 64, row0);
      }
      tma_store_commit();
    }
  }

  // Before the warpgroup exits: its stores have completed.
  __device__ __forceinline__ static void drain() {
    if (threadIdx.x % ::swr::sm90::kWarpgroupThreads == 0) ::swr::sm90::tma_store_wait<0>();
  }
};

}  // namespace sm90
}  // namespace gemm
}  // namespace swr
