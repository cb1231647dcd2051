// Epilogue of one consumer warpgroup: fp32 accumulators -> 16-bit C staged in 128B-swizzled
// shared memory -> TMA store (clipped at the matrix edge by the copy engine; a tile's part chunk,
// BlockN % 64 columns, by direct stores), or 16-byte direct stores (EpilogueKind::direct).
// A kernel computing C^T (ProductOrder::bt_times_at) stages its tile transposed, by stmatrix.trans,
// and stores it with TMA boxes of C itself.
#pragma once

#include "common/element.cuh"
#include "common/ptx.cuh"
#include "common/sm90/mbarrier.cuh"
#include "common/sm90/tma.cuh"
#include "common/sm90/warpgroup.cuh"
#include "gemm/sm90/gemm_traits_sm90.cuh"

namespace swr {
namespace gemm {
namespace sm90 {

// Accumulators -> 16-bit values in this warpgroup's staging buffer: kChunks chunks of
// [kWgRows][64] elements (the last one part-filled when BlockN % 64 != 0), 128B-swizzled like the
// TMA box of map_c (16-byte unit u of row r sits at u ^ (r % 8)), so the 4-byte writes of a warp (8
// rows x 4 lanes per m16n8 fragment) hit 32 different banks.
template <class T>
__device__ __forceinline__ void stage_accumulators(
    const float (&acc)[T::kWgSlices][T::kAccumulators], unsigned base, int warp, int lane) {
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
}

// The same for a tile of C^T, staged as C: kWgSlices chunks of [BlockN rows of C][64 columns of
// C] (slice s = columns 64s..64s+63 of the warpgroup's part), 128B-swizzled like map_c's box. One
// stmatrix.x4.trans takes two n8 blocks of a warp's 16 rows of C^T: each of its 8x8 matrices'
// columns becomes 16 bytes of one row of C, unit (2 * warp + half) ^ (row % 8) of that row.
template <class T>
__device__ __forceinline__ void stage_accumulators_transposed(
    const float (&acc)[T::kWgSlices][T::kAccumulators], unsigned base, int warp, int lane) {
  static_assert(T::kBlockN % 16 == 0, "n8 blocks in pairs");
  const int matrix = lane / 8;
  const int unit = 2 * warp + matrix % 2;
#pragma unroll
  for (int slice = 0; slice < T::kWgSlices; ++slice) {
#pragma unroll
    for (int j = 0; j < T::kBlockN / 8; j += 2) {
      const unsigned fragment[4] = {
          pack_pair<T::kElement>(acc[slice][4 * j], acc[slice][4 * j + 1]),
          pack_pair<T::kElement>(acc[slice][4 * j + 2], acc[slice][4 * j + 3]),
          pack_pair<T::kElement>(acc[slice][4 * j + 4], acc[slice][4 * j + 5]),
          pack_pair<T::kElement>(acc[slice][4 * j + 6], acc[slice][4 * j + 7])};
      const int row = 8 * (j + matrix / 2) + lane % 8;  // a row of C: a column of C^T
      stmatrix_x4_transposed(base + slice * T::kCChunkBytes + row * 128 + ((unit ^ (row & 7)) << 4),
                             fragment);
    }
  }
}

// Where a warpgroup's C tile goes: the TMA map, or the raw matrix for direct stores.
struct OutputC {
  const ::swr::sm90::TmaDescriptor* map;
  unsigned short* pointer;  // C [m][n], row-major
  int m, n;
};

// Column units (8 elements, 16 bytes) [FirstUnit, BlockN / 8) of the staged rows, stored with
// 16-byte st.global, clipped at the matrix edge; consecutive threads take consecutive units of a
// row. n % 8 == 0, so a unit is entirely inside or outside the matrix.
template <class T, int FirstUnit>
__device__ __forceinline__ void store_units_directly(unsigned base, const OutputC& out, int row0,
                                                     int col0, int thread) {
  constexpr int kUnitsPerRow = T::kBlockN / 8 - FirstUnit;
  constexpr int kUnits = T::kWgRows * kUnitsPerRow;
#pragma unroll 4
  for (int unit = thread; unit < kUnits; unit += ::swr::sm90::kWarpgroupThreads) {
    const int row = unit / kUnitsPerRow, column_unit = FirstUnit + unit % kUnitsPerRow;
    const unsigned address = base + (column_unit / 8) * T::kCChunkBytes + row * 128 +
                             (((column_unit % 8) ^ (row & 7)) << 4);
    unsigned v0, v1, v2, v3;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3)
                 : "r"(address)
                 : "memory");
    const int global_row = row0 + row, global_col = col0 + column_unit * 8;
    if (global_row < out.m && global_col < out.n) {
      unsigned short* target =
          out.pointer + static_cast<long long>(global_row) * out.n + global_col;
      asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(target), "r"(v0), "r"(v1),
                   "r"(v2), "r"(v3)
                   : "memory");
    }
  }
}

template <class T>
struct Epilogue {
  // The store runs asynchronously in the TMA variant: the warpgroup goes back to its mainloop at
  // once and only waits for the previous store to have *read* the staging buffer.
  __device__ __forceinline__ static void store(const float (&acc)[T::kWgSlices][T::kAccumulators],
                                               unsigned char* staging, const OutputC& out,
                                               int consumer, int row0, int col0) {
    using namespace ::swr::sm90;
    const int thread = threadIdx.x % kWarpgroupThreads;
    const int warp = thread / 32, lane = thread % 32;
    const int barrier = barrier_id::kConsumer0 + consumer;
    const unsigned base = smem_u32(staging);
    if constexpr (T::kEpilogue == EpilogueKind::tma_store) {
      if (thread == 0) tma_store_wait_read<0>();  // the previous tile's store has read `staging`
      named_barrier_sync(barrier, kWarpgroupThreads);
      if constexpr (T::kTransposed) {
        stage_accumulators_transposed<T>(acc, base, warp, lane);
      } else {
        stage_accumulators<T>(acc, base, warp, lane);
      }
      fence_proxy_async_shared();  // generic-proxy writes -> visible to the TMA store
      named_barrier_sync(barrier, kWarpgroupThreads);
      if constexpr (T::kTransposed) {
        // row0, col0: the warpgroup's first row and column of C^T, i.e. column and row of C.
        if (thread == 0) {
#pragma unroll
          for (int slice = 0; slice < T::kWgSlices; ++slice) {
            tma_store_2d(out.map, staging + slice * T::kCChunkBytes, row0 + slice * 64, col0);
          }
          tma_store_commit();
        }
        return;
      }
      if (thread == 0) {
#pragma unroll
        for (int chunk = 0; chunk < T::kFullChunks; ++chunk) {
          tma_store_2d(out.map, staging + chunk * T::kCChunkBytes, col0 + chunk * 64, row0);
        }
        tma_store_commit();
      }
      // A part chunk: its columns only (the next tile owns the rest of a 64-column box).
      if constexpr (T::kPartColumns != 0) {
        store_units_directly<T, T::kFullChunks * 8>(base, out, row0, col0, thread);
      }
    } else {
      named_barrier_sync(barrier, kWarpgroupThreads);  // everyone has read the previous tile
      stage_accumulators<T>(acc, base, warp, lane);
      named_barrier_sync(barrier, kWarpgroupThreads);
      store_units_directly<T, 0>(base, out, row0, col0, thread);
    }
  }

  // Before the warpgroup exits: its TMA stores have completed.
  __device__ __forceinline__ static void drain() {
    if constexpr (T::kEpilogue == EpilogueKind::tma_store) {
      if (threadIdx.x % ::swr::sm90::kWarpgroupThreads == 0) ::swr::sm90::tma_store_wait<0>();
    }
  }
};

}  // namespace sm90
}  // namespace gemm
}  // namespace swr
