// The TMA tensor maps of wgmma attention variants, without a GPU: what they describe, and the
// driver's rules (tensor_map_problem) applied to them and to bad pointers.
#include "runtime/attention_tensor_maps.hpp"

#include <gtest/gtest.h>

#include <tuple>

namespace swr {
namespace {

AttentionConfig wgmma_config(int block_m, int block_n) {
  AttentionConfig config;
  config.path = InstructionPath::wgmma;
  config.block_m = block_m;
  config.warps = AttentionConfig::wgmma_warps(block_m);
  config.block_n = block_n;
  return config;
}

const AttentionProblem kProblem = {
    .batch = 2, .heads = 3, .seq_q = 1000, .seq_kv = 777, .head_dim = 128, .dtype = DataType::bf16};
constexpr CUdeviceptr kBase = 0x7f0000000000;

TEST(AttentionTensorMaps, RankThreeHeadMajorWithBoxesOfTheTile) {
  const AttentionTensorMapDescriptions maps =
      attention_tensor_map_descriptions(kProblem, wgmma_config(192, 176));
  EXPECT_EQ(maps.q.name, "Q");
  EXPECT_EQ(maps.q.rank, 3);
  EXPECT_EQ(maps.q.element, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(maps.q.dims, (std::array<std::uint64_t, 5>{128, 1000, 6, 0, 0}));
  EXPECT_EQ(maps.q.strides, (std::array<std::uint64_t, 4>{256, 256000, 0, 0}));
  EXPECT_EQ(maps.q.box, (std::array<std::uint32_t, 5>{64, 192, 1, 0, 0}));
  EXPECT_EQ(maps.k.dims, (std::array<std::uint64_t, 5>{128, 777, 6, 0, 0}));
  EXPECT_EQ(maps.k.strides, (std::array<std::uint64_t, 4>{256, 198912, 0, 0}));
  EXPECT_EQ(maps.k.box, (std::array<std::uint32_t, 5>{64, 176, 1, 0, 0}));
  EXPECT_EQ(maps.v.name, "V");
  EXPECT_EQ(maps.v.dims, maps.k.dims);
  AttentionProblem f16 = kProblem;
  f16.dtype = DataType::f16;
  f16.head_dim = 64;
  EXPECT_EQ(attention_tensor_map_descriptions(f16, wgmma_config(128, 128)).q.element,
            CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
}

TEST(AttentionTensorMaps, HeadDimsAreLoadedInBoxesOfTheTemplatesChunks) {
  // {columns, swizzle bytes} per head dim: 64 columns with the 128-byte swizzle where they divide
  // D, else 32 with the 64-byte one, else 16 with the 32-byte one (D=80: five boxes a tile).
  const std::tuple<int, std::uint32_t, int> boxes[] = {
      {32, 32, 64},   {64, 64, 128}, {80, 16, 32},   {96, 32, 64},
      {128, 64, 128}, {160, 32, 64}, {192, 64, 128}, {256, 64, 128}};
  for (const auto& [head_dim, columns, swizzle] : boxes) {
    AttentionProblem problem = kProblem;
    problem.head_dim = head_dim;
    const AttentionTensorMapDescriptions maps =
        attention_tensor_map_descriptions(problem, wgmma_config(128, 80));
    for (const TensorMapDescription* map : {&maps.q, &maps.k, &maps.v}) {
      EXPECT_EQ(map->box[0], columns) << head_dim << " " << map->name;
      EXPECT_EQ(map->swizzle_bytes, swizzle) << head_dim << " " << map->name;
      EXPECT_EQ(map->dims[0], static_cast<std::uint64_t>(head_dim));
      EXPECT_EQ(map->strides[0], static_cast<std::uint64_t>(head_dim) * 2);
    }
    EXPECT_EQ(maps.q.box[1], 128u);
    EXPECT_EQ(maps.k.box[1], 80u);
  }
}

TEST(AttentionTensorMaps, EveryEnumerableTileFollowsTheDriversRules) {
  for (int head_dim : {32, 64, 80, 96, 128, 160, 192, 256}) {
    for (int block_m : {128, 192}) {
      for (int block_n : {48, 64, 80, 96, 112, 128, 144, 160, 176, 192}) {
        AttentionProblem problem = kProblem;
        problem.head_dim = head_dim;
        EXPECT_EQ(attention_tensor_map_problem(problem, wgmma_config(block_m, block_n),
                                               {kBase, kBase + 4096, kBase + 8192}),
                  "");
      }
    }
  }
}

TEST(AttentionTensorMaps, BadPointersAreNamed) {
  const AttentionConfig config = wgmma_config(128, 128);
  EXPECT_EQ(attention_tensor_map_problem(kProblem, config, {kBase, kBase + 2, kBase}),
            "K: base address 0x7f0000000002 is not 16-byte aligned (TMA needs it)");
  EXPECT_EQ(attention_tensor_map_problem(kProblem, config, {kBase, kBase, 0}),
            "V: base address is null");
  EXPECT_EQ(attention_tensor_map_problem(kProblem, config, {kBase + 8, kBase, kBase}),
            "Q: base address 0x7f0000000008 is not 16-byte aligned (TMA needs it)");
}

TEST(AttentionTensorMaps, StridesTmaCannotTakeAreRefused) {
  // The rule the maps are checked with: a head dim whose rows are not a multiple of 16 bytes
  // (not one swr instantiates) is refused by name, not launched.
  AttentionProblem odd = kProblem;
  odd.head_dim = 36;
  const std::string why =
      attention_tensor_map_problem(odd, wgmma_config(128, 128), {kBase, kBase, kBase});
  EXPECT_NE(why.find("Q: "), std::string::npos) << why;
  EXPECT_NE(why.find("is not a multiple of 16"), std::string::npos) << why;
}

}  // namespace
}  // namespace swr
