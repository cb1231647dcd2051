// Global -> shared copies of the Q, K and V tiles, 16 bytes per cp.async, rows past the end of
// the sequence zero-filled: one tile at a time, and the main loop's K and V tiles with their
// addressing worked out once per Q tile.
#pragma once

#include "common/ptx.cuh"
#include "common/swizzled_tile.cuh"

namespace swr {
namespace attention {

// Global -> shared copies of one [Rows x HeadDim] tile of Q, K or V, 16 bytes per cp.async.
// Rows past the end of the sequence are zero-filled (tails that are not a multiple of the tile).
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

// Global -> shared copies of the K and V tiles of the main loop, with the per-thread addressing
// worked out once per Q tile instead of at every copy: each thread always copies the same chunk
// column, kRowsPerPass rows apart, so its shared offsets are constants past the first and its
// global offsets a fixed stride. Rows past the end of the sequence are zero-filled, as in
// load_tile_async above; only a tile that reaches past the end pays for the row checks.
template <int Threads, int Rows, int Cols>
struct KvTileCopy {
  using Tile = SwizzledTile<Rows, Cols>;
  static constexpr int kRowsPerPass = Threads / Tile::kChunksPerRow;
  static constexpr int kPasses = Rows / kRowsPerPass;
  // A multiple of 8 rows keeps the row's low bits, hence the swizzle, the same on every pass.
  static_assert(kRowsPerPass % 8 == 0 && Rows % kRowsPerPass == 0, "whole passes of 8k rows");

  int row;                // first row this thread copies, within the tile
  unsigned shared_bytes;  // its chunk's byte offset within the tile
  int global_elements;    // its chunk's element offset within the tile's rows in global memory

  __device__ __forceinline__ KvTileCopy() {
    row = threadIdx.x / Tile::kChunksPerRow;
    const int chunk = threadIdx.x % Tile::kChunksPerRow;
    shared_bytes = Tile::lane_offset(row, chunk);
    global_elements = row * Cols + chunk * 8;
  }

  // Copies rows [first_row, first_row + Rows) of `matrix` ([seq][Cols]) into `tile`.
  __device__ __forceinline__ void operator()(const Tile& tile, const unsigned short* matrix,
                                             int first_row, int seq) const {
    const unsigned destination = tile.shared_base() + shared_bytes;
    const unsigned short* source = matrix + static_cast<long long>(first_row) * Cols;
    constexpr int kPassBytes = kRowsPerPass * Cols * 2;
    if (first_row + Rows <= seq) {
#pragma unroll
      for (int i = 0; i < kPasses; ++i)
        cp_async_16(destination + i * kPassBytes,
                    source + global_elements + i * kRowsPerPass * Cols, true);
    } else {
#pragma unroll
      for (int i = 0; i < kPasses; ++i) {
        const bool valid = first_row + row + i * kRowsPerPass < seq;
        // An invalid row reads nothing; the slice's first row stands in as a valid address.
        cp_async_16(destination + i * kPassBytes,
                    valid ? source + global_elements + i * kRowsPerPass * Cols : matrix, valid);
      }
    }
  }
};

}  // namespace attention
}  // namespace swr
