// A [Rows x Cols] tile of 16-bit elements in shared memory, stored in 16-byte chunks laid out so
// that the 8 row addresses of one ldmatrix phase (8 consecutive rows, one chunk column), and the
// 16-byte stores of cp.async, fall into 8 different bank groups: no conflicts.
//  - Cols a multiple of 64 (head dims 64, 128, 192, 256): rows of whole groups of 8 chunks, the
//    chunk index XOR-ed with the row within each group; no padding.
//  - other Cols (32, 80, 96, 160): each row padded by one chunk to an odd number of chunks, so 8
//    consecutive rows start in 8 different bank groups; 1/5 to 1/21 more shared memory, no masking.
#pragma once

#include "common/ptx.cuh"

namespace swr {

template <int Rows, int Cols>
struct SwizzledTile {
  static_assert(Cols % 16 == 0, "rows of whole k16 steps (pairs of 8-element chunks)");
  static constexpr int kChunksPerRow = Cols / 8;
  static constexpr bool kPadded = Cols % 64 != 0;
  // Chunks from one row's start to the next's.
  static constexpr int kRowPitchChunks = kPadded ? kChunksPerRow + 1 : kChunksPerRow;
  static constexpr int kRowBytes = kRowPitchChunks * 16;
  static constexpr int kElements = Rows * kRowPitchChunks * 8;
  static_assert(!kPadded || kRowPitchChunks % 2 == 1, "an odd pitch spreads 8 rows over 8 banks");

  unsigned short* base;

  // Element offset of the chunk holding elements [8 * chunk, 8 * chunk + 8) of `row`.
  __device__ __forceinline__ static int chunk_offset(int row, int chunk) {
    if constexpr (kPadded) {
      return (row * kRowPitchChunks + chunk) * 8;
    } else {
      const int physical = (chunk & ~7) | ((chunk ^ row) & 7);
      return row * Cols + physical * 8;
    }
  }

  __device__ __forceinline__ unsigned short* chunk(int row, int chunk_index) const {
    return base + chunk_offset(row, chunk_index);
  }
  // Address of element (row, col); col must be even (pairs never straddle a chunk).
  __device__ __forceinline__ unsigned short* element(int row, int col) const {
    return base + chunk_offset(row, col / 8) + (col % 8);
  }

  __device__ __forceinline__ unsigned shared_base() const { return shared_address(base); }

  // Fragment addressing without per-load swizzle arithmetic. A lane reads chunk (row0 + row,
  // chunk0 + chunk), where (row, chunk) is fixed per lane and (row0, chunk0) is a compile-time
  // step. With row0 % 8 == 0 the row's low 3 bits are the lane's own, and with chunk0 even and
  // chunk < 2 the chunk sum carries nothing into the XOR-ed bits; so the swizzled offset is the
  // lane's offset with a constant XOR-ed in, plus a constant: one LOP3 per ldmatrix, the rest an
  // immediate. The padded layout is linear: the step is an immediate alone.
  __device__ __forceinline__ static unsigned lane_offset(int row, int chunk) {
    return chunk_offset(row, chunk) * 2;
  }
  __device__ __forceinline__ static unsigned step_offset(unsigned lane_bytes, int row0,
                                                         int chunk0) {
    if constexpr (kPadded) {
      return lane_bytes + (row0 * kRowPitchChunks + chunk0) * 16;
    } else {
      return (lane_bytes ^ ((chunk0 & 7) * 16)) + (row0 * Cols + (chunk0 & ~7) * 8) * 2;
    }
  }
};

}  // namespace swr
