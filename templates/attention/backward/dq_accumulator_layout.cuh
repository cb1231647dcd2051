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
// The postprocess reads either through `offset`; tests/generator check both are bijections.
#pragma once

#include "common/host_device.cuh"

namespace swr {
namespace attention {

template <int HeadDim>
struct DqRowLayout {
  static SWR_HOST_DEVICE int offset(int row, int column) { return row * HeadDim + column; }
};

// Two consumer warpgroups: with 128 Q rows a step each takes 64 rows, with 64 each takes half the
// columns (the split of dQ = dS K in backward_ws_traits.cuh). A warpgroup's m64nN accumulator
// register 4j + 2h + e of thread 32 w + 4 g + q holds row 16 w + g + 8 h, column 8 j + 2 q + e
// (common/sm90/wgmma.cuh).
template <int HeadDim, int BlockM>
struct DqFragmentLayout {
  static constexpr bool kByRows = BlockM == 128;
  static constexpr int kColumns = kByRows ? HeadDim : HeadDim / 2;  // of one warpgroup
  static constexpr int kWarpgroupFloats = 64 * kColumns;

  static SWR_HOST_DEVICE int offset(int row, int column) {
    const int warpgroup = kByRows ? row / 64 : column / kColumns;
    const int r = kByRows ? row % 64 : row;
    const int c = kByRows ? column : column % kColumns;
    const int thread = (r / 16) * 32 + (r % 8) * 4 + (c % 8) / 2;
    const int j = c / 8;
    return warpgroup * kWarpgroupFloats + j * 512 + thread * 4 + ((r % 16) / 8) * 2 + c % 2;
  }
};

}  // namespace attention
}  // namespace swr
