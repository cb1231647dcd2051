// Global -> shared copies of one operand tile of a pipeline stage, 16 bytes per cp.async, with the
// per-thread addressing worked out once: each thread always copies the same chunk column,
// kRowsPerPass rows apart, so its shared offsets are constants past the first. Chunks outside the
// matrix (rows past the end, or columns past the end: M, N and K tails) are zero-filled, so a
// partial tile adds exact zeros to the accumulators. Columns come in whole chunks: the host
// requires K and N to be multiples of 8 (16-byte rows for cp.async).
#pragma once

#include "common/ptx.cuh"
#include "gemm/operand_tile.cuh"

namespace swr {
namespace gemm {

template <int Threads, int Rows, int Cols>
struct OperandCopy {
  using Tile = OperandTile<Rows, Cols>;
  static constexpr int kRowsPerPass = Threads / Tile::kChunksPerRow;
  static constexpr int kPasses = Rows / kRowsPerPass;
  static constexpr unsigned kPassBytes = kRowsPerPass * Cols * 2;
  // The swizzle of a row must repeat every pass (see operand_tile.cuh): 8 rows for wide tiles, 16
  // (8 lines of two rows) for 32-element rows.
  static_assert(kRowsPerPass >= 1 && kRowsPerPass % (Cols == 32 ? 16 : 8) == 0,
                "whole passes of 8 (16) rows");
  static_assert(Rows % kRowsPerPass == 0, "every thread copies the same number of chunks");

  int row;  // first row this thread copies, within the tile
  int col;  // first element of its chunk, within the tile's row
  unsigned shared_bytes;

  __device__ __forceinline__ OperandCopy() {
    row = threadIdx.x / Tile::kChunksPerRow;
    const int chunk = threadIdx.x % Tile::kChunksPerRow;
    col = chunk * 8;
    shared_bytes = Tile::chunk_bytes(row, chunk);
  }

  // Copies rows [row0, row0 + Rows) x columns [col0, col0 + Cols) of a row-major
  // [rows x cols] matrix with leading dimension ld into the tile at shared address `tile`.
  // Offsets are 32-bit: the host keeps every matrix below 2^31 elements.
  __device__ __forceinline__ void operator()(unsigned tile, const unsigned short* matrix, int ld,
                                             int row0, int col0, int rows, int cols) const {
    const bool col_valid = col0 + col < cols;
    const unsigned destination = tile + shared_bytes;
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int r = row0 + row + i * kRowsPerPass;
      const bool valid = col_valid && r < rows;
      // An invalid chunk reads nothing; the matrix's first element stands in as its address.
      const unsigned short* source = valid ? matrix + (r * ld + col0 + col) : matrix;
      cp_async_16(destination + i * kPassBytes, source, valid);
    }
  }
};

}  // namespace gemm
}  // namespace swr
