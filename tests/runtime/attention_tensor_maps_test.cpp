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

AttentionLayout contiguous(const AttentionProblem& problem) {
  return resolve_attention_layout(problem, {}, {}, {}, {});
}

// [B, S, H, D] storage seen as [B, H, S, D] (a projection's output): element strides
// {S*H*D, D, H*D, 1}.
ElementStrides bshd(const AttentionProblem& problem, int heads, int seq) {
  const std::int64_t d = problem.head_dim;
  return {static_cast<std::int64_t>(seq) * heads * d, d, heads * d, 1};
}

TEST(AttentionTensorMaps, RankFourHeadMajorWithBoxesOfTheTile) {
  const AttentionTensorMapDescriptions maps =
      attention_tensor_map_descriptions(kProblem, wgmma_config(192, 176), contiguous(kProblem));
  EXPECT_EQ(maps.q.name, "Q");
  EXPECT_EQ(maps.q.rank, 4);
  EXPECT_EQ(maps.q.element, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  // {D, S, H, B}: bytes of a row, of a head, of a batch.
  EXPECT_EQ(maps.q.dims, (std::array<std::uint64_t, 5>{128, 1000, 3, 2, 0}));
  EXPECT_EQ(maps.q.strides, (std::array<std::uint64_t, 4>{256, 256000, 768000, 0}));
  EXPECT_EQ(maps.q.box, (std::array<std::uint32_t, 5>{64, 192, 1, 1, 0}));
  EXPECT_EQ(maps.k.dims, (std::array<std::uint64_t, 5>{128, 777, 3, 2, 0}));
  EXPECT_EQ(maps.k.strides, (std::array<std::uint64_t, 4>{256, 198912, 596736, 0}));
  EXPECT_EQ(maps.k.box, (std::array<std::uint32_t, 5>{64, 176, 1, 1, 0}));
  EXPECT_EQ(maps.v.name, "V");
  EXPECT_EQ(maps.v.dims, maps.k.dims);
  AttentionProblem f16 = kProblem;
  f16.dtype = DataType::f16;
  f16.head_dim = 64;
  EXPECT_EQ(
      attention_tensor_map_descriptions(f16, wgmma_config(128, 128), contiguous(f16)).q.element,
      CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
}

TEST(AttentionTensorMaps, GroupedKvHeadsAndStridedStorage) {
  // Llama-3-like GQA (32 query heads over 8 K/V heads), Q and O as [B, S, H, D] projections, K and
  // V as a [B, H_kv, S, D] cache: each map walks its own heads at its own strides.
  AttentionProblem gqa = kProblem;
  gqa.heads = 32;
  gqa.kv_heads = 8;
  const AttentionLayout layout =
      resolve_attention_layout(gqa, bshd(gqa, 32, gqa.seq_q), {}, {}, bshd(gqa, 32, gqa.seq_q));
  const AttentionTensorMapDescriptions maps =
      attention_tensor_map_descriptions(gqa, wgmma_config(128, 128), layout);
  EXPECT_EQ(maps.q.dims, (std::array<std::uint64_t, 5>{128, 1000, 32, 2, 0}));
  // seq: 32 heads of 256 bytes; head: one row; batch: 1000 x 32 rows.
  EXPECT_EQ(maps.q.strides, (std::array<std::uint64_t, 4>{8192, 256, 8192000, 0}));
  EXPECT_EQ(maps.k.dims, (std::array<std::uint64_t, 5>{128, 777, 8, 2, 0}));
  EXPECT_EQ(maps.k.strides, (std::array<std::uint64_t, 4>{256, 198912, 1591296, 0}));
  EXPECT_EQ(attention_tensor_map_problem(gqa, wgmma_config(128, 128), layout,
                                         {kBase, kBase + 4096, kBase + 8192}),
            "");
  // MQA over one batch: dimensions of extent 1 take a stride TMA accepts, whatever was given.
  AttentionProblem mqa = gqa;
  mqa.batch = 1;
  mqa.kv_heads = 1;
  const AttentionLayout mqa_layout =
      resolve_attention_layout(mqa, {0, 128, 4096, 1}, {0, 0, 128, 1}, {0, 0, 128, 1}, {});
  const AttentionTensorMapDescriptions mqa_maps =
      attention_tensor_map_descriptions(mqa, wgmma_config(128, 128), mqa_layout);
  EXPECT_EQ(mqa_maps.k.dims, (std::array<std::uint64_t, 5>{128, 777, 1, 1, 0}));
  EXPECT_EQ(mqa_maps.k.strides, (std::array<std::uint64_t, 4>{256, 198912, 198912, 0}));
  EXPECT_EQ(mqa_maps.q.strides, (std::array<std::uint64_t, 4>{8192, 256, 8192000, 0}));
  EXPECT_EQ(
      attention_tensor_map_problem(mqa, wgmma_config(128, 128), mqa_layout, {kBase, kBase, kBase}),
      "");
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
        attention_tensor_map_descriptions(problem, wgmma_config(128, 80), contiguous(problem));
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
        EXPECT_EQ(
            attention_tensor_map_problem(problem, wgmma_config(block_m, block_n),
                                         contiguous(problem), {kBase, kBase + 4096, kBase + 8192}),
            "");
      }
    }
  }
}

TEST(AttentionTensorMaps, BadPointersAreNamed) {
  const AttentionConfig config = wgmma_config(128, 128);
  const AttentionLayout layout = contiguous(kProblem);
  EXPECT_EQ(attention_tensor_map_problem(kProblem, config, layout, {kBase, kBase + 2, kBase}),
            "K: base address 0x7f0000000002 is not 16-byte aligned (TMA needs it)");
  EXPECT_EQ(attention_tensor_map_problem(kProblem, config, layout, {kBase, kBase, 0}),
            "V: base address is null");
  EXPECT_EQ(attention_tensor_map_problem(kProblem, config, layout, {kBase + 8, kBase, kBase}),
            "Q: base address 0x7f0000000008 is not 16-byte aligned (TMA needs it)");
}

TEST(AttentionTensorMaps, StridesTmaCannotTakeAreRefused) {
  // Strides are valid layouts (no overlap) but not multiples of 16 bytes: refused by tensor and
  // dimension, never launched. Rows of K 1000 elements apart in a padded cache ...
  const AttentionConfig config = wgmma_config(128, 128);
  AttentionLayout layout =
      resolve_attention_layout(kProblem, {}, {3 * 777 * 1000, 777 * 1000, 1000, 1}, {}, {});
  EXPECT_EQ(attention_tensor_map_problem(kProblem, config, layout, {kBase, kBase, kBase}), "");
  layout = resolve_attention_layout(kProblem, {}, {3 * 777 * 1001, 777 * 1001, 1001, 1}, {}, {});
  EXPECT_EQ(attention_tensor_map_problem(kProblem, config, layout, {kBase, kBase, kBase}),
            "K: row stride of 2002 bytes is not a multiple of 16 (TMA needs it; for a row-major "
            "16-bit matrix the row length must be a multiple of 8 elements)");
  // ... or a head stride of V that is one element off.
  layout =
      resolve_attention_layout(kProblem, {}, {}, {3 * 777 * 128 + 8, 777 * 128 + 1, 128, 1}, {});
  EXPECT_EQ(attention_tensor_map_problem(kProblem, config, layout, {kBase, kBase, kBase}),
            "V: stride of dimension 2 of 198914 bytes is not a multiple of 16 (TMA needs it; for "
            "a row-major 16-bit matrix the row length must be a multiple of 8 elements)");
}

}  // namespace
}  // namespace swr
