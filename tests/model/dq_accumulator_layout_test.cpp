// The attention backward's dQ accumulator layouts (templates/attention/backward/
// dq_accumulator_layout.cuh), built by the host compiler: each places every element of a Q tile
// exactly once inside the tile's block, keeps a pair of columns together where it says so (the
// postprocess then reads pairs), and the fragment layout is where the warp-specialized kernel's
// consumers store their wgmma accumulators (16 bytes a thread, in thread order).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "attention/backward/backward_args.cuh"
#include "attention/backward/dq_accumulator_layout.cuh"

namespace swr::attention {
namespace {

template <class Layout>
void expect_bijection_with_pairs(int block_m, int head_dim) {
  std::vector<int> hits(static_cast<std::size_t>(block_m) * head_dim, 0);
  for (int row = 0; row < block_m; ++row) {
    for (int column = 0; column < head_dim; ++column) {
      const int offset = Layout::offset(row, column);
      ASSERT_GE(offset, 0);
      ASSERT_LT(offset, block_m * head_dim);
      ++hits[static_cast<std::size_t>(offset)];
      if (Layout::kColumnPairs && column % 2 == 1) {
        EXPECT_EQ(offset, Layout::offset(row, column - 1) + 1);
      }
    }
  }
  for (int count : hits) EXPECT_EQ(count, 1);
}

TEST(DqAccumulatorLayout, RowsAndFragmentsPlaceEveryElementOnce) {
  expect_bijection_with_pairs<DqRowLayout<64>>(128, 64);
  expect_bijection_with_pairs<DqRowLayout<128>>(64, 128);
  expect_bijection_with_pairs<DqFragmentLayout<128, 64>>(64, 128);
  expect_bijection_with_pairs<DqFragmentLayout<64, 128>>(128, 64);
  expect_bijection_with_pairs<DqFragmentLayout<256, 64>>(64, 256);
  expect_bijection_with_pairs<DqFragmentLayout<128, 80>>(80, 128);
  EXPECT_TRUE((DqFragmentLayout<128, 64>::kColumnPairs));
  EXPECT_FALSE((DqFragmentLayout<128, 80>::kColumnPairs));
}

// Consumer warpgroup wg's thread t stores registers 4j..4j+3 of its m64nN accumulator as float4 j
// at float 4 (128 j + t) of its part (wg x kWarpgroupFloats); register 4j + i holds row
// 16 (t / 32) + (t % 32) / 4 + 8 (i / 2), column 8j + 2 (t % 4) + i % 2 of its share (the first 64
// rows or the second, with 128 Q rows a step; else the first or second half of the columns). With
// 80 Q rows the accumulator is dQ^T (m64 x 80): its row is the tile's column, its column the
// tile's row.
template <int HeadDim, int BlockM>
void expect_fragment_order() {
  using Layout = DqFragmentLayout<HeadDim, BlockM>;
  const int registers = (Layout::kTransposed ? BlockM : Layout::kColumns) / 2;
  for (int wg = 0; wg < 2; ++wg) {
    for (int t = 0; t < 128; ++t) {
      for (int reg = 0; reg < registers; ++reg) {
        const int j = reg / 4, i = reg % 4;
        int row = 16 * (t / 32) + (t % 32) / 4 + 8 * (i / 2);
        int column = 8 * j + 2 * (t % 4) + i % 2;
        if (Layout::kTransposed) std::swap(row, column);
        if (Layout::kByRows) {
          row += 64 * wg;
        } else {
          column += wg * Layout::kColumns;
        }
        EXPECT_EQ(Layout::offset(row, column),
                  wg * Layout::kWarpgroupFloats + 4 * (128 * j + t) + i)
            << "wg " << wg << " thread " << t << " register " << reg;
      }
    }
  }
}

TEST(DqAccumulatorLayout, FragmentsAreTheConsumersRegistersInThreadOrder) {
  expect_fragment_order<128, 64>();
  expect_fragment_order<64, 128>();
  expect_fragment_order<128, 80>();
}

// The postprocess stages a part by part_position: every float of a part lands on the row and
// column whose offset is that float, inside the part's rows and columns.
template <int HeadDim, int BlockM>
void expect_part_positions_invert_offset() {
  using Layout = DqFragmentLayout<HeadDim, BlockM>;
  for (int part = 0; part < Layout::kParts; ++part) {
    for (int index = 0; index < Layout::kWarpgroupFloats; ++index) {
      const auto at = Layout::part_position(index);
      ASSERT_GE(at.row, 0);
      ASSERT_LT(at.row, Layout::kPartRows);
      ASSERT_GE(at.column, 0);
      ASSERT_LT(at.column, Layout::kColumns);
      const int row = at.row + (Layout::kByRows ? part * Layout::kPartRows : 0);
      const int column = at.column + (Layout::kByRows ? 0 : part * Layout::kColumns);
      ASSERT_EQ(Layout::offset(row, column), part * Layout::kWarpgroupFloats + index)
          << "part " << part << " float " << index;
      // A float4's floats a fixed step from its first.
      const auto first = Layout::part_position(index - index % 4);
      const int pair = index % 2, half = (index % 4) / 2;
      EXPECT_EQ(at.row, first.row + pair * Layout::kPairStep.row + half * Layout::kHalfStep.row);
      EXPECT_EQ(at.column,
                first.column + pair * Layout::kPairStep.column + half * Layout::kHalfStep.column);
    }
  }
}

TEST(DqAccumulatorLayout, PartPositionsInvertTheOffsetWithinAPart) {
  expect_part_positions_invert_offset<128, 64>();
  expect_part_positions_invert_offset<64, 128>();
  expect_part_positions_invert_offset<256, 64>();
  expect_part_positions_invert_offset<128, 80>();
  expect_part_positions_invert_offset<96, 64>();
}

TEST(DqAccumulatorLayout, PostprocessGridCoversEveryPartOrRow) {
  // Fragment layout: two parts of each Q tile of each head.
  EXPECT_EQ(backward_postprocess_blocks(kDqFragmentParts, 2 * 16, 1000, 13, 128), 2 * 16 * 13 * 2);
  // Row layout at head dim 128: 16 lanes a row, 16 rows a CTA of 256 threads, rounded up.
  EXPECT_EQ(backward_postprocess_blocks(0, 3, 1000, 8, 128), (3 * 1000 + 15) / 16);
}

}  // namespace
}  // namespace swr::attention
