// A [Rows x Cols] tile of 16-bit elements in shared memory, stored in 16-byte chunks whose index is
// XOR-ed with the row (within each group of 8 chunks). The 8 row addresses of one ldmatrix phase,
// and the 16-byte stores of cp.async, then fall into 8 different bank groups: no conflicts.
#pragma once

#include "common/ptx.cuh"

namespace swr {

template <int Rows, int Cols>
struct SwizzledTile {
  static_assert(Cols % 64 == 0, "rows must hold whole groups of 8 chunks of 8 elements");
  static constexpr int kChunksPerRow = Cols / 8;
  static constexpr int kElements = Rows * Cols;

  unsigned short* base;

  // Element offset of the chunk holding elements [8 * chunk, 8 * chunk + 8) of `row`.
  __device__ __forceinline__ static int chunk_offset(int row, int chunk) {
    const int physical = (chunk & ~7) | ((chunk ^ row) & 7);
    return row * Cols + physical * 8;
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
  // immediate.
  __device__ __forceinline__ static unsigned lane_offset(int row, int chunk) {
    return chunk_offset(row, chunk) * 2;
  }
  __device__ __forceinline__ static unsigned step_offset(unsigned lane_bytes, int row0,
                                                         int chunk0) {
    return (lane_bytes ^ ((chunk0 & 7) * 16)) + (row0 * Cols + (chunk0 & ~7) * 8) * 2;
  }
};

}  // namespace swr
