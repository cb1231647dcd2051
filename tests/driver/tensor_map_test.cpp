// The host-side rules of a TMA tensor map (driver/tensor_map.hpp), checked without a GPU: every
// rule cuda.h documents for cuTensorMapEncodeTiled that swr's maps can break, each named.
#include <gtest/gtest.h>

#include "driver/tensor_map.hpp"

namespace swr {
namespace {

constexpr std::uint64_t kAligned = 0x7f0000000000;

TensorMapDescription a_operand(std::uint64_t rows, std::uint64_t cols) {
  return TensorMapDescription::matrix("A", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rows, cols, cols, 128,
                                      64);
}

TEST(TensorMapRules, AcceptsAnAlignedRowMajorMatrix) {
  EXPECT_EQ(tensor_map_problem(a_operand(4096, 4096), kAligned), "");
  EXPECT_EQ(tensor_map_problem(a_operand(77, 8), kAligned), "");  // smaller than one box
}

TEST(TensorMapRules, MatrixIsInnermostFirstWithByteStrides) {
  const TensorMapDescription d =
      TensorMapDescription::matrix("B", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 1000, 264, 272, 64, 64);
  EXPECT_EQ(d.rank, 2);
  EXPECT_EQ(d.dims[0], 264u);
  EXPECT_EQ(d.dims[1], 1000u);
  EXPECT_EQ(d.strides[0], 272u * 2);
  EXPECT_EQ(d.box[0], 64u);
  EXPECT_EQ(d.box[1], 64u);
}

TEST(TensorMapRules, RefusesAMisalignedBaseByName) {
  const std::string problem = tensor_map_problem(a_operand(256, 256), kAligned + 2);
  EXPECT_NE(problem.find("A: base address 0x7f0000000002"), std::string::npos) << problem;
  EXPECT_NE(problem.find("16-byte aligned"), std::string::npos) << problem;
  EXPECT_NE(tensor_map_problem(a_operand(256, 256), kAligned + 8), "");
  EXPECT_EQ(tensor_map_problem(a_operand(256, 256), kAligned + 16), "");
  EXPECT_NE(tensor_map_problem(a_operand(256, 256), 0).find("null"), std::string::npos);
}

TEST(TensorMapRules, RefusesARowStrideThatIsNotAMultipleOf16Bytes) {
  // 1004 fp16 elements = 2008 bytes a row: the N, K multiple-of-8 rule exists for this.
  const std::string problem = tensor_map_problem(a_operand(64, 1004), kAligned);
  EXPECT_NE(problem.find("row stride of 2008 bytes is not a multiple of 16"), std::string::npos)
      << problem;
  EXPECT_EQ(tensor_map_problem(a_operand(64, 1000), kAligned), "");
}

TEST(TensorMapRules, RefusesAStrideShorterThanTheRow) {
  TensorMapDescription d = a_operand(64, 256);
  d.strides[0] = 256;  // 128 elements, but rows hold 256
  EXPECT_NE(tensor_map_problem(d, kAligned).find("smaller than the 512 bytes"), std::string::npos);
}

TEST(TensorMapRules, RefusesBoxesTheHardwareCannotCopy) {
  TensorMapDescription d = a_operand(4096, 4096);
  d.box[1] = 257;
  EXPECT_NE(tensor_map_problem(d, kAligned).find("box of 257 elements; allowed 1..256"),
            std::string::npos);
  d = a_operand(4096, 4096);
  d.box[0] = 128;  // 256 bytes: wider than the 128-byte swizzle span
  EXPECT_NE(tensor_map_problem(d, kAligned).find("inner box of 256 bytes"), std::string::npos);
  d.box[0] = 4;  // 8 bytes: not a multiple of 16
  EXPECT_NE(tensor_map_problem(d, kAligned).find("inner box of 8 bytes"), std::string::npos);
}

TEST(TensorMapRules, NarrowerSwizzlesTakeBoxesUpToTheirSpan) {
  // 64- and 32-byte swizzles (head dims 96 and 80 of the attention maps): 32 and 16 columns.
  TensorMapDescription d = a_operand(4096, 4096);
  d.swizzle_bytes = 64;
  d.box[0] = 32;
  EXPECT_EQ(tensor_map_problem(d, kAligned), "");
  d.box[0] = 64;
  EXPECT_EQ(tensor_map_problem(d, kAligned),
            "A: inner box of 128 bytes; the 64-byte swizzle needs a multiple of 16 up to 64");
  d.swizzle_bytes = 32;
  d.box[0] = 16;
  EXPECT_EQ(tensor_map_problem(d, kAligned), "");
  d.box[0] = 32;
  EXPECT_EQ(tensor_map_problem(d, kAligned),
            "A: inner box of 64 bytes; the 32-byte swizzle needs a multiple of 16 up to 32");
  d.swizzle_bytes = 256;
  EXPECT_EQ(tensor_map_problem(d, kAligned), "A: swizzle of 256 bytes; allowed 32, 64, 128");
}

TEST(TensorMapRules, ChecksEveryDimensionOfAThreeDimensionalMap) {
  // [B*H][S][D] attention operand, D innermost: strides D*2 and S*D*2 bytes.
  TensorMapDescription d;
  d.name = "K";
  d.rank = 3;
  d.dims = {128, 4097, 16, 0, 0};
  d.strides = {256, 256 * 4097, 0, 0};
  d.box = {64, 128, 1, 0, 0};
  EXPECT_EQ(tensor_map_problem(d, kAligned), "");
  d.dims[2] = 0;
  EXPECT_NE(tensor_map_problem(d, kAligned).find("K: dimension 2 has 0 elements"),
            std::string::npos);
  d.dims[2] = 16;
  d.strides[1] = 256 * 4097 + 8;
  EXPECT_EQ(tensor_map_problem(d, kAligned),
            "K: stride of dimension 2 of 1048840 bytes is not a multiple of 16 (TMA needs it; for "
            "a row-major 16-bit matrix the row length must be a multiple of 8 elements)");
}

TEST(TensorMapRules, OuterStridesMayComeInAnyOrderButRowsMayNotOverlap) {
  // [B, S, H, D] storage seen as {D, S, H, B}: the head stride (one row, 256 bytes) is below the
  // row stride (16 heads' rows), as FA3's maps of such tensors have it; TMA takes that.
  TensorMapDescription d;
  d.name = "Q";
  d.rank = 4;
  d.dims = {128, 4097, 16, 2, 0};
  d.strides = {256 * 16, 256, 256 * 16 * 4097, 0};
  d.box = {64, 128, 1, 1, 0};
  EXPECT_EQ(tensor_map_problem(d, kAligned), "");
  d.strides[0] = 128;  // rows of 256 bytes, 128 apart
  EXPECT_EQ(tensor_map_problem(d, kAligned),
            "Q: row stride of 128 bytes is smaller than the 256 bytes the inner dimensions span");
}

TEST(TensorMapRules, RefusesOtherElementTypes) {
  TensorMapDescription d = a_operand(64, 64);
  d.element = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  EXPECT_NE(tensor_map_problem(d, kAligned).find("fp16 or bf16"), std::string::npos);
}

}  // namespace
}  // namespace swr
