// Where the fp32 dQ accumulator (backward_args.cuh's workspace) keeps element (row, column) of a
// Q tile. Every tile is one block of BlockM x HeadDim floats (the sequence padded to whole tiles:
// dq_accum_offset), and a layout places the tile's elements inside its block:
//   DqRowLayout        row by row: what kernels that add dQ row by row use (the mma.sync kernel,
//                      the wgmma kernel without a producer).
//   DqFragmentLayout   each wgmma consumer warpgroup's dQ accumulators in thread order, 16 bytes
//                      a thread at a time (register 4i..4i+3 of thread t at float 4 * (128 i + t)
//                      of the warpgroup's part): the warp-specialized kernel stores a step's dQ to
//                      shared memory without bank conflicts and adds the whole tile with one bulk
//                      reduction.
// The postprocess reads the row layout through `offset` (a pair of columns at once), and the
// fragment layout a warpgroup's part at a time through `part_position`, the inverse of `offset`
// within a part; tests/model check both are bijections and that the two agree.
#pragma once

#include "common/host_device.cuh"

namespace swr {
namespace attention {

// The fragment layout's parts a Q tile: one a consumer warpgroup (the launcher sizes the
// postprocess's grid by it: backward_postprocess_blocks).
constexpr int kDqFragmentParts = 2;

// An element of a tile, or of a part of one.
struct DqPosition {
  int row;
  int column;
};

template <int HeadDim>
struct DqRowLayout {
  static constexpr bool kColumnPairs = true;  // columns 2c and 2c + 1 adjacent
  static constexpr int kParts = 0;            // the postprocess reads it row by row
  static SWR_HOST_DEVICE int offset(int row, int column) { return row * HeadDim + column; }
};

// Two consumer warpgroups: with 128 Q rows a step each takes 64 rows, with 64 each takes half the
// columns (the split of dQ = dS K in backward_ws_traits.cuh), and with a BlockM of no whole
// 64-row slices (80) each takes half the columns transposed: its accumulator is dQ^T, rows its 64
// head-dim columns, columns the Q rows. A warpgroup's m64nN accumulator register 4j + 2h + e of
// thread 32 w + 4 g + q holds row 16 w + g + 8 h, column 8 j + 2 q + e (common/sm90/wgmma.cuh).
template <int HeadDim, int BlockM>
struct DqFragmentLayout {
  static constexpr bool kByRows = BlockM == 128;
  static constexpr bool kTransposed = BlockM % 64 != 0;
  static constexpr bool kColumnPairs = !kTransposed;
  static constexpr int kColumns = kByRows ? HeadDim : HeadDim / 2;  // of one warpgroup
  static constexpr int kWarpgroupFloats = (kByRows ? 64 : BlockM) * kColumns;
  // A part (one warpgroup's floats, contiguous in the block) holds kPartRows x kColumns of the
  // tile, from row part * kPartRows (by rows) or column part * kColumns (else).
  static constexpr int kParts = kDqFragmentParts;
  static constexpr int kPartRows = kByRows ? 64 : BlockM;
  static_assert(kParts * kWarpgroupFloats == BlockM * HeadDim, "the parts fill the tile's block");

  static SWR_HOST_DEVICE int offset(int row, int column) {
    const int warpgroup = kByRows ? row / 64 : column / kColumns;
    const int q = kByRows ? row % 64 : row;  // the tile's Q row and column in the warpgroup's part
    const int c = kByRows ? column : column % kColumns;
    const int r = kTransposed ? c : q;  // the accumulator's row and column
    const int n = kTransposed ? q : c;
    const int thread = (r / 16) * 32 + (r % 8) * 4 + (n % 8) / 2;
    const int j = n / 8;
    return warpgroup * kWarpgroupFloats + j * 512 + thread * 4 + ((r % 16) / 8) * 2 + n % 2;
  }

  // Float `index` of a part: its row and column within the part (kPartRows x kColumns).
  static SWR_HOST_DEVICE DqPosition part_position(int index) {
    const int thread = (index % 512) / 4;
    const int r = 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((index % 4) / 2);
    const int n = 8 * (index / 512) + 2 * (thread % 4) + index % 2;
    return kTransposed ? DqPosition{n, r} : DqPosition{r, n};
  }
  // The four floats 4i .. 4i + 3 of a part from the first one's position: 4i + 1 is kPairStep
  // past it, 4i + 2 kHalfStep past it (its register's row + 8), 4i + 3 both.
  static constexpr DqPosition kPairStep = kTransposed ? DqPosition{1, 0} : DqPosition{0, 1};
  static constexpr DqPosition kHalfStep = kTransposed ? DqPosition{0, 8} : DqPosition{8, 0};
};

}  // namespace attention
}  // namespace swr
