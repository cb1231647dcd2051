// One pipeline stage of a GEMM operand in shared memory: [Rows x Cols] 16-bit elements, row-major,
// stored as 16-byte chunks permuted so that neither the cp.async stores nor the 8 row addresses of
// one ldmatrix phase collide in a bank group.
//   Cols a multiple of 64 (A with BK = 64, B): chunk c of row r goes to chunk slot c ^ (r % 8)
//     within its group of 8, as common/swizzled_tile.cuh does.
//   Cols == 32 (A with BK = 32): two rows share one 128-byte line; the chunk's slot within the
//     line (4 * (r % 2) + c) is XOR-ed with the line number (r / 2) % 8. The 8 rows of one ldmatrix
//     phase span 4 lines whose XOR values differ in the low 2 bits, and their two halves use
//     opposite slot halves: 8 different slots.
// Both satisfy the same stepping rule (step_offset), so the fragment loads need no per-load
// swizzle arithmetic.
#pragma once

#include "common/ptx.cuh"

namespace swr {
namespace gemm {

template <int Rows, int Cols>
struct OperandTile {
  static_assert(Cols == 32 || Cols % 64 == 0, "rows of 32 elements or whole groups of 64");
  static constexpr int kChunksPerRow = Cols / 8;
  static constexpr int kElements = Rows * Cols;
  static constexpr int kBytes = kElements * 2;

  // Byte offset of the chunk holding elements [8 * chunk, 8 * chunk + 8) of `row`.
  __device__ __forceinline__ static unsigned chunk_bytes(int row, int chunk) {
    if constexpr (Cols == 32) {
      const int line = row / 2;
      const int slot = (row % 2) * 4 + chunk;
      return static_cast<unsigned>(line * 128 + ((slot ^ line) & 7) * 16);
    } else {
      const int physical = (chunk & ~7) | ((chunk ^ row) & 7);
      return static_cast<unsigned>((row * Cols + physical * 8) * 2);
    }
  }

  // A lane whose own chunk is (row, chunk) reads chunk (row + row0, chunk + chunk0) at this
  // offset, for row0 a multiple of 16 and chunk0 whose low 3 bits are disjoint from chunk's: the
  // lane's own offset with chunk0's low bits XOR-ed in, plus a constant. (The sum carries nothing
  // into the XOR-ed bits; with Cols == 32, row0 / 2 is a multiple of 8, so the line's XOR value
  // stays the same.) One LOP3 per ldmatrix, the rest an immediate.
  __device__ __forceinline__ static unsigned step_offset(unsigned lane_bytes, int row0,
                                                         int chunk0) {
    return (lane_bytes ^ static_cast<unsigned>((chunk0 & 7) * 16)) +
           static_cast<unsigned>((row0 * Cols + (chunk0 & ~7) * 8) * 2);
  }
};

}  // namespace gemm
}  // namespace swr
