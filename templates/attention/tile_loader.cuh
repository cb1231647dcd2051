// Global -> shared copies of one [Rows x HeadDim] tile of Q, K or V, 16 bytes per cp.async.
// Rows past the end of the sequence are zero-filled (tails that are not a multiple of the tile).
#pragma once

#include "common/cp_async.cuh"
#include "common/swizzled_tile.cuh"

namespace swr {
namespace attention {

// `matrix` is one (batch, head) slice [seq][Cols]; the tile covers rows [first_row,
// first_row+Rows).
template <int Threads, int Rows, int Cols>
__device__ __forceinline__ void load_tile_async(const SwizzledTile<Rows, Cols>& tile,
                                                const unsigned short* matrix, int first_row,
                                                int seq) {
  constexpr int kChunks = Rows * SwizzledTile<Rows, Cols>::kChunksPerRow;
  static_assert(kChunks % Threads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kChunks / Threads; ++i) {
    const int chunk = threadIdx.x + i * Threads;
    const int row = chunk / SwizzledTile<Rows, Cols>::kChunksPerRow;
    const int column_chunk = chunk % SwizzledTile<Rows, Cols>::kChunksPerRow;
    const bool valid = first_row + row < seq;
    const long long source_row = valid ? first_row + row : 0;
    cp_async_16(tile.chunk(row, column_chunk), matrix + source_row * Cols + column_chunk * 8,
                valid);
  }
}

// Shared -> global, 16 bytes per thread, rows at or past `seq` skipped.
template <int Threads, int Rows, int Cols>
__device__ __forceinline__ void store_tile(const SwizzledTile<Rows, Cols>& tile,
                                           unsigned short* matrix, int first_row, int seq) {
  constexpr int kChunks = Rows * SwizzledTile<Rows, Cols>::kChunksPerRow;
#pragma unroll
  for (int i = 0; i < kChunks / Threads; ++i) {
    const int chunk = threadIdx.x + i * Threads;
    const int row = chunk / SwizzledTile<Rows, Cols>::kChunksPerRow;
    const int column_chunk = chunk % SwizzledTile<Rows, Cols>::kChunksPerRow;
    if (first_row + row < seq) {
      *reinterpret_cast<uint4*>(matrix + (long long)(first_row + row) * Cols + column_chunk * 8) =
          *reinterpret_cast<const uint4*>(tile.chunk(row, column_chunk));
    }
  }
}

}  // namespace attention
}  // namespace swr
