// Accumulator fragments both wgmma backward kernels (backward_kernel.cuh, backward_kernel_ws.cuh)
// move between registers, shared and global memory: a warpgroup thread's view of an m64nN
// accumulator, dS^T into its shared tile (the A operand of dQ = dS K), and dK or dV rows out.
// T: either kernel's traits (kBlockM, kDsChunkBytes, kDsByStmatrix, kHeadDim, kElement).
#pragma once

#include "common/element.cuh"
#include "common/ptx.cuh"

namespace swr {
namespace attention {
namespace sm90 {

// One warpgroup thread's view of the accumulators: register 4 * j + i of an m64nN accumulator
// holds row 16 * warp + lane / 4 + 8 * (i / 2), column 8 * j + 2 * (lane % 4) + i % 2.
struct WarpgroupLane {
  int warp;  // within the warpgroup
  int lane;
  __device__ __forceinline__ int group() const { return lane / 4; }
  __device__ __forceinline__ int quad() const { return lane % 4; }
  __device__ __forceinline__ int row(int i) const { return 16 * warp + group() + 8 * (i / 2); }
  __device__ __forceinline__ int column(int j, int i) const { return 8 * j + 2 * quad() + i % 2; }
};

// dS^T (this warpgroup's 64 rows, packed pairs) into the shared [BlockN][BlockM] tile of 128-byte
// swizzled rows, where the 16 bytes of row r's n8 block j lie at unit (j % 8) ^ (r % 8).
// T::kDsByStmatrix: n8 blocks j and j + 1 of a warp's 16 rows are four 8x8 matrices, one
// stmatrix (registers 2j + h: rows + 8h of block j; lane 8i + r gives row r of matrix i). With j
// even, unit (j + i / 2) ^ (row % 8) is j ^ (i / 2 ^ row % 8), the lane's own unit with j XOR-ed
// in, and a row's address has no bits where a unit goes (rows of 128 bytes from a 1024-byte
// aligned tile): one XOR a store. Otherwise a word per store, as each pair is formed (the kernel
// without a producer, at 255 registers, spilled with stmatrix's four-word groups).
// T::kDqTransposed: the tile lies as dS, [BlockM Q rows][BlockN K/V columns] in chunks of 64 K/V
// columns, the 16 bytes of K/V columns 8u..8u+7 of Q row q at unit u ^ (q % 8) (the K-major B of
// dQ^T = K^T dS^T). The same four matrices, stored transposed: lane 8i + r gives Q row r of
// matrix i, whose 8 K/V columns are one unit; stepping j by 2 moves 16 Q rows, the unit unchanged.
template <class T>
__device__ __forceinline__ void store_ds(const unsigned* ds, unsigned char* tile, int first_row,
                                         const WarpgroupLane& at) {
  if constexpr (T::kDqTransposed) {
    static_assert(T::kDsByStmatrix, "dS stored transposed by stmatrix only");
    const int matrix = at.lane / 8;
    const int q = 8 * (matrix / 2) + at.lane % 8;
    const int unit = (first_row % 64) / 8 + 2 * at.warp + matrix % 2;
    const unsigned lane_address = shared_address(tile) + (first_row / 64) * T::kDsChunkBytes +
                                  q * 128 + ((unit ^ (q % 8)) << 4);
#pragma unroll
    for (int j = 0; j < T::kBlockM / 8; j += 2) {
      const unsigned words[4] = {ds[2 * j], ds[2 * j + 1], ds[2 * j + 2], ds[2 * j + 3]};
      stmatrix_x4_transposed(lane_address + j * 8 * 128, words);
    }
  } else if constexpr (T::kDsByStmatrix) {
    const int matrix = at.lane / 8;
    const int row = first_row + 16 * at.warp + 8 * (matrix % 2) + at.lane % 8;
    const unsigned lane_address =
        (shared_address(tile) + row * 128) | (((matrix / 2) ^ (row % 8)) << 4);
#pragma unroll
    for (int j = 0; j < T::kBlockM / 8; j += 2) {
      const unsigned words[4] = {ds[2 * j], ds[2 * j + 1], ds[2 * j + 2], ds[2 * j + 3]};
      stmatrix_x4((lane_address ^ ((j % 8) << 4)) + (j / 8) * T::kDsChunkBytes, words);
    }
  } else {
#pragma unroll
    for (int j = 0; j < T::kBlockM / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = first_row + at.row(2 * h);
        const int unit = (j % 8) ^ (row % 8);
        *reinterpret_cast<unsigned*>(tile + (j / 8) * T::kDsChunkBytes + row * 128 + unit * 16 +
                                     4 * at.quad()) = ds[2 * j + h];
      }
  }
}

// `accumulator` (this warpgroup's 64 rows of dK or dV, times `scale`) into `out`'s rows from
// `first_row` (of the sequence), rows at or past seq_kv skipped.
template <class T>
__device__ __forceinline__ void store_rows(const float* accumulator, float scale,
                                           unsigned short* out, long long stride, int first_row,
                                           int seq_kv, const WarpgroupLane& at) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = first_row + at.row(2 * h);
    if (row >= seq_kv) continue;
    unsigned short* line = out + row * stride;
#pragma unroll
    for (int j = 0; j < T::kHeadDim / 8; ++j) {
      *reinterpret_cast<unsigned*>(line + at.column(j, 0)) = pack_pair<T::kElement>(
          accumulator[4 * j + 2 * h] * scale, accumulator[4 * j + 2 * h + 1] * scale);
    }
  }
}

}  // namespace sm90
}  // namespace attention
}  // namespace swr
