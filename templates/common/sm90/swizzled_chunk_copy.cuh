// cp.async copies of a [Rows x Cols] tile of 16-bit elements into the layout a wgmma descriptor
// reads with the 128-byte swizzle (and TMA writes, box {64, Rows}, CU_TENSOR_MAP_SWIZZLE_128B):
// 64-column chunks back to back, each [Rows][128 bytes], the 16-byte unit u of row r stored at
// unit u ^ (r % 8). For kernels that stage tiles with plain copies instead of the copy engine
// (the wgmma backward: its pointers need no tensor map). Rows at or past `seq` are zero-filled.
#pragma once

#include "common/ptx.cuh"

namespace swr {
namespace sm90 {

template <int Threads, int Rows, int Cols>
struct SwizzledChunkCopy {
  static constexpr int kUnitsPerRow = Cols / 8;  // 16-byte units
  static constexpr int kRowsPerPass = Threads / kUnitsPerRow;
  static constexpr int kPasses = Rows / kRowsPerPass;
  static constexpr int kChunkBytes = Rows * 128;
  static_assert(Cols % 64 == 0, "whole 64-column (128-byte) chunks");
  static_assert(Threads % kUnitsPerRow == 0 && Rows % kRowsPerPass == 0,
                "every thread copies whole passes of whole rows");
  // A pass moves whole 8-row swizzle repeats, so every pass's shared offset is the first one's
  // plus a constant.
  static_assert(kRowsPerPass % 8 == 0, "passes of whole swizzle repeats");

  int row;                // first row this thread copies, within the tile
  int unit;               // its 16-byte unit within a row of the tile
  unsigned shared_bytes;  // its first unit's byte offset within the tile

  __device__ __forceinline__ SwizzledChunkCopy() {
    row = threadIdx.x / kUnitsPerRow;
    unit = threadIdx.x % kUnitsPerRow;
    shared_bytes = (unit / 8) * kChunkBytes + row * 128 + (((unit % 8) ^ (row % 8)) << 4);
  }

  // Rows [first_row, first_row + Rows) of `matrix` (rows `stride` elements apart) into the tile at
  // shared address `tile`; rows at or past `seq` zero-filled.
  __device__ __forceinline__ void load_async(unsigned tile, const unsigned short* matrix,
                                             int first_row, int seq, long long stride) const {
    const unsigned short* source = matrix + (first_row + row) * stride + unit * 8;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const bool valid = first_row + row + pass * kRowsPerPass < seq;
      // An invalid row reads nothing; the slice's first row stands in as a valid address.
      cp_async_16(tile + shared_bytes + pass * kRowsPerPass * 128,
                  valid ? source + pass * kRowsPerPass * stride : matrix, valid);
    }
  }
};

}  // namespace sm90
}  // namespace swr
