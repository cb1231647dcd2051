// Global <-> shared copies of the Q, K, V and O tiles, 16 bytes per cp.async (or store). A tile's
// rows are `step` elements apart in global memory (the tensor's sequence stride: head_dim for
// [B, H, S, D], heads * head_dim for [B, S, H, D]); rows past the end of the sequence are
// zero-filled on the way in and skipped on the way out. The stride is a launch argument even for
// contiguous tensors: a second, compile-time-stride copy of the main loop cost more registers
// (and spills at D=128) than its immediate offsets saved.
#pragma once

#include "common/ptx.cuh"
#include "common/swizzled_tile.cuh"

namespace swr {
namespace attention {

// Which chunks of a [Rows x Cols] tile each of Threads threads copies, worked out once: a thread
// always copies the same chunk column, kRowsPerPass rows apart (threads past kRowsPerPass whole
// rows idle when the chunks of a row do not divide the threads). Where the rows of a pass keep
// their low 3 bits (kRowsPerPass a multiple of 8) or the layout is linear (padded), every pass's
// shared offset is the first one plus a constant.
template <int Threads, int Rows, int Cols>
struct TileRows {
  using Tile = SwizzledTile<Rows, Cols>;
  static constexpr int kChunksPerRow = Tile::kChunksPerRow;
  static constexpr int kRowsPerPass = Threads / kChunksPerRow;
  static constexpr int kPasses = (Rows + kRowsPerPass - 1) / kRowsPerPass;
  static constexpr bool kAllThreads = Threads % kChunksPerRow == 0;
  static constexpr bool kWholePasses = Rows % kRowsPerPass == 0;
  static constexpr bool kConstantStep = Tile::kPadded || kRowsPerPass % 8 == 0;
  static_assert(kRowsPerPass >= 1, "a row's chunks must not outnumber the threads");

  int row;                // first row this thread copies, within the tile
  int chunk;              // its chunk column
  unsigned shared_bytes;  // its first chunk's byte offset within the tile

  __device__ __forceinline__ TileRows() {
    row = threadIdx.x / kChunksPerRow;
    chunk = threadIdx.x % kChunksPerRow;
    shared_bytes = Tile::lane_offset(row, chunk);
  }

  __device__ __forceinline__ bool active() const {
    return kAllThreads || threadIdx.x < kRowsPerPass * kChunksPerRow;
  }
  // Pass `pass` of this thread lies inside the tile.
  __device__ __forceinline__ bool in_tile(int pass) const {
    return kWholePasses || pass < kPasses - 1 || row + pass * kRowsPerPass < Rows;
  }
  __device__ __forceinline__ unsigned shared_offset(int pass) const {
    if constexpr (kConstantStep) {
      return shared_bytes + pass * kRowsPerPass * Tile::kRowBytes;
    } else {
      return Tile::lane_offset(row + pass * kRowsPerPass, chunk);
    }
  }

  // Global -> shared: rows [first_row, first_row + Rows) of `matrix` (one (batch, head) slice,
  // its rows `stride` apart) into `tile`; rows at or past `seq` zero-filled.
  __device__ __forceinline__ void load_async(const Tile& tile, const unsigned short* matrix,
                                             int first_row, int seq, long long step) const {
    if (!active()) return;
    const unsigned destination = tile.shared_base();
    const unsigned short* source = matrix + (first_row + row) * step + chunk * 8;
    if (first_row + Rows <= seq) {
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) {
        if (in_tile(pass)) {
          cp_async_16(destination + shared_offset(pass), source + pass * kRowsPerPass * step, true);
        }
      }
    } else {
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) {
        if (!in_tile(pass)) continue;
        const bool valid = first_row + row + pass * kRowsPerPass < seq;
        // An invalid row reads nothing; the slice's first row stands in as a valid address.
        cp_async_16(destination + shared_offset(pass),
                    valid ? source + pass * kRowsPerPass * step : matrix, valid);
      }
    }
  }

  // Shared -> global, 16 bytes per chunk, rows at or past `seq` skipped.
  __device__ __forceinline__ void store(const Tile& tile, unsigned short* matrix, int first_row,
                                        int seq, long long stride) const {
    if (!active()) return;
    const unsigned char* source = reinterpret_cast<const unsigned char*>(tile.base);
    unsigned short* destination = matrix + (first_row + row) * stride + chunk * 8;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      if (in_tile(pass) && first_row + row + pass * kRowsPerPass < seq) {
        *reinterpret_cast<uint4*>(destination + pass * kRowsPerPass * stride) =
            *reinterpret_cast<const uint4*>(source + shared_offset(pass));
      }
    }
  }
};

}  // namespace attention
}  // namespace swr
