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

// One step of a 4x4 transpose across a quad: with the lane `Distance` away (1 or 2), the lane
// whose Distance bit is set (`upper`) swaps its words x (x without that bit), the other its words
// x + Distance.
template <int Distance>
__device__ __forceinline__ void swap_with_quad_lane(unsigned (&words)[4], bool upper) {
#pragma unroll
  for (int x = 0; x < 4; ++x) {
    if (x & Distance) continue;
    const unsigned received =
        __shfl_xor_sync(0xffffffffu, upper ? words[x] : words[x + Distance], Distance);
    if (upper) {
      words[x] = received;
    } else {
      words[x + Distance] = received;
    }
  }
}

// `accumulator` (this warpgroup's 64 rows of dK or dV, times `scale`) into `out`'s rows from
// `first_row` (of the sequence), rows at or past seq_kv skipped. 16 bytes a store: a quad's four
// threads hold the pairs of each n8 block of a row, so for each four blocks they transpose their
// packed pairs (two exchanges, lanes 1 then 2 apart) and each stores one block's eight columns
// (the launcher requires dK and dV 16-byte aligned, strides multiples of 8). With 4-byte stores,
// eight rows a warp instruction, the consumers stalled on the store queue at each tile's end
// (lg_throttle in ncu) while the tensor cores had nothing to run: these took 0.977-0.982 of their
// time at B4 H16 S4096 D128 causal on an H100, 0.98-0.995 elsewhere (short tiles gain most).
template <class T>
__device__ __forceinline__ void store_rows(const float* accumulator, float scale,
                                           unsigned short* out, long long stride, int first_row,
                                           int seq_kv, const WarpgroupLane& at) {
  static_assert(T::kHeadDim % 32 == 0, "whole groups of four n8 blocks");
  const int quad = at.quad();
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = first_row + at.row(2 * h);
#pragma unroll
    for (int j0 = 0; j0 < T::kHeadDim / 8; j0 += 4) {
      unsigned a[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        a[i] = pack_pair<T::kElement>(accumulator[4 * (j0 + i) + 2 * h] * scale,
                                      accumulator[4 * (j0 + i) + 2 * h + 1] * scale);
      }
      // Lanes 1 apart swap the pairs of alternate blocks, then lanes 2 apart whole halves: lane
      // q of the quad ends with every lane's pair of block j0 + q, in lane order.
      swap_with_quad_lane<1>(a, quad & 1);
      swap_with_quad_lane<2>(a, quad & 2);
      if (row < seq_kv) {
        store_sixteen(out + row * stride + 8 * (j0 + quad), a[0], a[1], a[2], a[3]);
      }
    }
  }
}

}  // namespace sm90
}  // namespace attention
}  // namespace swr
