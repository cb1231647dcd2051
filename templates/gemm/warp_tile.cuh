// The math one warp does for its [WarpM x WarpN] part of an output tile: fp32 accumulators as
// mma.sync m16n8k16 fragments, fed by ldmatrix from a pipeline stage one k16 step at a time (A
// with ldmatrix.x4, B, stored [k][n], with ldmatrix.x4.trans), and the guarded 16-bit store of
// the result.
#pragma once

#include "common/element.cuh"
#include "common/ptx.cuh"
#include "gemm/operand_tile.cuh"

namespace swr {
namespace gemm {

template <class T>
struct WarpTile {
  static constexpr int kWarpM = T::kWarpM;
  static constexpr int kWarpN = T::kWarpN;
  static constexpr int kAtomsM = kWarpM / 16;     // m16 slices
  static constexpr int kAtomsN = kWarpN / 8;      // n8 slices
  static constexpr int kPairsN = kAtomsN / 2;     // one ldmatrix.x4.trans feeds two n8 slices
  static constexpr int kSteps = T::kBlockK / 16;  // k16 steps per stage
  static_assert(kWarpM % 16 == 0 && kWarpN % 32 == 0, "warp tiles of whole m16 x n32 blocks");
  static_assert(kSteps % 2 == 0, "register sets alternate within a stage and restart at 0");

  using ATile = OperandTile<T::kBlockM, T::kBlockK>;
  using BTile = OperandTile<T::kBlockK, T::kBlockN>;

  float accumulators[kAtomsM][kAtomsN][4];
  int warp_row;  // first row of this warp within the output tile
  int warp_col;  // first column
  // Byte offsets, within a stage's A and B tiles, of the chunk this lane addresses (see
  // OperandTile::step_offset).
  unsigned a_lane_bytes;
  unsigned b_lane_bytes;

  __device__ __forceinline__ void start(int warp, int lane) {
    warp_row = (warp / T::kWarpsN) * kWarpM;
    warp_col = (warp % T::kWarpsN) * kWarpN;
    // A: rows lane % 16 of each m16 slice, k chunk lane / 16 -> a0..a3 in mma order.
    a_lane_bytes = ATile::chunk_bytes(warp_row + lane % 16, lane / 16);
    // B: k rows lane % 8 (+8 for matrices 1 and 3), n chunk lane / 16 (the second n8 slice):
    // transposed, registers 0,1 are b0,b1 of one n8 slice and 2,3 those of the next. The warp's
    // first chunk is a multiple of 4, so the slice steps (2 * pair) stay disjoint from its bits.
    b_lane_bytes = BTile::chunk_bytes(lane % 8 + ((lane / 8) % 2) * 8, warp_col / 8 + lane / 16);
#pragma unroll
    for (int m = 0; m < kAtomsM; ++m)
#pragma unroll
      for (int n = 0; n < kAtomsN; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) accumulators[m][n][e] = 0.f;
  }

  // Operand fragments of two k16 steps: the mainloop loads step s + 1 (or the next stage's step 0)
  // into one set while the tensor cores work on the other, so ldmatrix latency stays hidden.
  unsigned a_fragments[2][kAtomsM][4];
  unsigned b_fragments[2][kPairsN][4];

  // Fragments of k16 step `step` of the stage whose A and B tiles start at a_tile and b_tile,
  // into register set `set`.
  __device__ __forceinline__ void load_fragments(unsigned a_tile, unsigned b_tile, int step,
                                                 int set) {
#pragma unroll
    for (int m = 0; m < kAtomsM; ++m)
      ldmatrix_x4(a_fragments[set][m], a_tile + ATile::step_offset(a_lane_bytes, m * 16, 2 * step));
#pragma unroll
    for (int p = 0; p < kPairsN; ++p)
      ldmatrix_x4_transposed(b_fragments[set][p],
                             b_tile + BTile::step_offset(b_lane_bytes, step * 16, 2 * p));
  }

  // accumulators += the k16 step held in register set `set`.
  __device__ __forceinline__ void multiply(int set) {
#pragma unroll
    for (int m = 0; m < kAtomsM; ++m)
#pragma unroll
      for (int n = 0; n < kAtomsN; ++n) {
        // Serpentine over n: consecutive mma share an operand register set.
        const int nn = (m % 2) ? kAtomsN - 1 - n : n;
        mma_16x8x16<T::kElement>(accumulators[m][nn], a_fragments[set][m],
                                 b_fragments[set][nn / 2][(nn % 2) * 2],
                                 b_fragments[set][nn / 2][(nn % 2) * 2 + 1]);
      }
  }

  // C rows [row0, row0 + BlockM) x cols [col0, col0 + BlockN) as 16-bit values, pairs at or past
  // (m, n) skipped. n is even (a multiple of 8), so a pair is either inside or outside.
  __device__ __forceinline__ void store(unsigned short* c, int row0, int col0, int m, int n,
                                        int lane) const {
    const int group = lane / 4;
    const int quad = lane % 4;
#pragma unroll
    for (int a = 0; a < kAtomsM; ++a)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = row0 + warp_row + a * 16 + group + half * 8;
        if (row >= m) continue;
        unsigned short* c_row = c + row * n;
#pragma unroll
        for (int b = 0; b < kAtomsN; ++b) {
          const int col = col0 + warp_col + b * 8 + 2 * quad;
          if (col < n) {
            *reinterpret_cast<unsigned*>(c_row + col) = pack_pair<T::kElement>(
                accumulators[a][b][2 * half], accumulators[a][b][2 * half + 1]);
          }
        }
      }
  }
};

}  // namespace gemm
}  // namespace swr
