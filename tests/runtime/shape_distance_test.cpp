// The documented distances of the nearest-shape lookup: attention on the H200's scale (132 SMs,
// 60 MiB of L2 in two partitions: K/V that every SM reads fits up to 30 MiB), and GEMM.
#include <gtest/gtest.h>

#include <cmath>

#include "swr/shape_distance.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

GpuScale h200() {
  return gpu_scale("h200", 132, 60LL * 1024 * 1024);
}

TEST(ShapeDistance, TakesTheL2PartitionsFromTheBuiltInProfile) {
  EXPECT_EQ(h200().l2_partitions, 2);
  EXPECT_EQ(gpu_scale("gb10", 48, 24LL << 20).l2_partitions, 1);
  EXPECT_EQ(gpu_scale("nvidia-rtx-a6000", 84, 6LL << 20).l2_partitions, 1);
}

TEST(ShapeDistance, FeaturesOfThePapersShape) {
  // B=8, S=131072, D=64: one head's K and V are 32 MiB, just past the 30 MiB that fit.
  const ShapeFeatures features = shape_features(attention_shape(8, 1, 131072, 64), h200());
  EXPECT_DOUBLE_EQ(features.q_tiles, 8 * 1024);
  EXPECT_DOUBLE_EQ(features.heads_per_wave, 1);
  EXPECT_DOUBLE_EQ(features.kv_working_set_bytes, 32 * kMiB);
  EXPECT_DOUBLE_EQ(features.l2_fraction, 32.0 / 30.0);
  EXPECT_DOUBLE_EQ(features.waves, 8 * 1024 / 132.0);
  EXPECT_FALSE(features.fits_l2);
}

TEST(ShapeDistance, ShortHeadsShareAWave) {
  // 8 tiles per head: a wave of 132 tiles spans 17 heads, whose K/V it reads at once.
  const ShapeFeatures features = shape_features(attention_shape(1, 64, 1024, 64), h200());
  EXPECT_DOUBLE_EQ(features.heads_per_wave, 17);
  EXPECT_DOUBLE_EQ(features.kv_working_set_bytes, 17 * 0.25 * kMiB);
  // ... but never more heads than the problem has.
  EXPECT_DOUBLE_EQ(shape_features(attention_shape(1, 2, 1024, 64), h200()).heads_per_wave, 2);
}

TEST(ShapeDistance, IsZeroForTheSameShapeAndSymmetric) {
  const AttentionProblem a = attention_shape(8, 1, 16384, 128);
  const AttentionProblem b = attention_shape(4, 2, 40000, 128);
  EXPECT_DOUBLE_EQ(*shape_distance(a, a, h200()), 0.0);
  EXPECT_DOUBLE_EQ(*shape_distance(a, b, h200()), *shape_distance(b, a, h200()));
}

TEST(ShapeDistance, GrowsByOnePerFactorOfTwoOnEachAxis) {
  // Both fit (8 and 16 MiB), one head per wave: doubling S doubles the K/V working set and the
  // tile count.
  const AttentionProblem small = attention_shape(8, 1, 32768, 64);
  const AttentionProblem large = attention_shape(8, 1, 65536, 64);
  EXPECT_NEAR(*shape_distance(small, large, h200()), 2.0, 1e-12);
  // Doubling the batch doubles the tiles only.
  EXPECT_NEAR(*shape_distance(small, attention_shape(16, 1, 32768, 64), h200()), 1.0, 1e-12);
}

TEST(ShapeDistance, CompiledInPartsMustMatch) {
  const AttentionProblem wanted = attention_shape(8, 1, 16384, 128);
  EXPECT_FALSE(shape_distance(wanted, attention_shape(8, 1, 16384, 64), h200()));
  EXPECT_FALSE(shape_distance(wanted, attention_shape(8, 1, 16384, 128, true), h200()));
  EXPECT_FALSE(
      shape_distance(wanted, attention_shape(8, 1, 16384, 128, false, DataType::bf16), h200()));
}

// A GQA shape never stands in for another ratio or for multi-head attention, nor a bottom-right
// mask for a top-left one (where S_q != S_kv makes them differ); shapes of one ratio compare on
// the K/V of the K/V heads a wave reads.
TEST(ShapeDistance, NeverMixesGqaRatiosOrCausalAlignments) {
  AttentionProblem llama = attention_shape(1, 32, 8192, 128, true);
  llama.kv_heads = 8;
  AttentionProblem other_ratio = llama;
  other_ratio.kv_heads = 4;
  EXPECT_FALSE(shape_distance(llama, other_ratio, h200()));
  EXPECT_FALSE(shape_distance(llama, attention_shape(1, 32, 8192, 128, true), h200()));
  AttentionProblem same_ratio = attention_shape(2, 16, 8192, 128, true);
  same_ratio.kv_heads = 4;
  EXPECT_TRUE(shape_distance(llama, same_ratio, h200()));

  // 64 tiles a head: a wave spans 3 query heads, which share one K/V head of 4 MiB.
  const ShapeFeatures features = shape_features(llama, h200());
  EXPECT_DOUBLE_EQ(features.heads_per_wave, 3);
  EXPECT_DOUBLE_EQ(features.kv_working_set_bytes, 4 * kMiB);

  AttentionProblem prefill = attention_shape(1, 8, 2048, 128, true);
  prefill.seq_kv = 8192;
  AttentionProblem bottom_right = prefill;
  bottom_right.causal_align = CausalAlignment::bottom_right;
  EXPECT_FALSE(shape_distance(prefill, bottom_right, h200()));
  EXPECT_FALSE(shape_distance(bottom_right, prefill, h200()));
  // With equal lengths the two masks are one: the alignment does not keep them apart.
  AttentionProblem square = attention_shape(1, 8, 8192, 128, true);
  AttentionProblem square_br = square;
  square_br.causal_align = CausalAlignment::bottom_right;
  EXPECT_DOUBLE_EQ(*shape_distance(square, square_br, h200()), 0.0);
  EXPECT_EQ(square.key(), square_br.key());
}

// D=128 f16: one head's K and V are 512 bytes per row, so they fit up to S = 61440.
TEST(ShapeDistance, PrefersTheSameSideOfTheL2SizeWhenKvDoesNotFit) {
  const AttentionProblem wanted = attention_shape(8, 1, 65536, 128);    // 32 MiB: does not fit
  const AttentionProblem fits = attention_shape(8, 1, 57344, 128);      // 28 MiB: fits
  const AttentionProblem streams = attention_shape(8, 1, 131072, 128);  // 64 MiB: does not fit
  ASSERT_FALSE(shape_features(wanted, h200()).fits_l2);
  ASSERT_TRUE(shape_features(fits, h200()).fits_l2);
  // |S1 - S2| says 57344 (8192 away, against 65536): the wrong side of the L2 size.
  EXPECT_LT(std::abs(wanted.seq_q - fits.seq_q), std::abs(wanted.seq_q - streams.seq_q));
  const double to_fits = *shape_distance(wanted, fits, h200());
  const double to_streams = *shape_distance(wanted, streams, h200());
  EXPECT_LT(to_streams, to_fits);
  EXPECT_NEAR(to_streams, 2.0, 1e-12);  // twice the K/V, twice the tiles
  EXPECT_GT(to_fits, kL2CrossingPenalty);
}

TEST(ShapeDistance, PrefersTheSameSideOfTheL2SizeWhenKvFits) {
  const AttentionProblem wanted = attention_shape(8, 1, 49152, 128);  // 24 MiB: fits
  const AttentionProblem over = attention_shape(8, 1, 65536, 128);    // 32 MiB: just over
  const AttentionProblem inside = attention_shape(8, 1, 16384, 128);  // 8 MiB: fits
  EXPECT_LT(*shape_distance(wanted, inside, h200()), *shape_distance(wanted, over, h200()));
}

TEST(ShapeDistance, TheL2SizeDependsOnTheGpu) {
  // 32 MiB of K/V fits a single-partition 48 MiB L2 but not the H200's shared half.
  const AttentionProblem shape = attention_shape(8, 1, 131072, 64);
  EXPECT_FALSE(shape_features(shape, h200()).fits_l2);
  EXPECT_TRUE(shape_features(shape, GpuScale{100, 48LL << 20, 1}).fits_l2);
}

TEST(ShapeDistance, RefusesAScaleWithoutSmsOrL2) {
  EXPECT_THROW(shape_features(attention_shape(1, 1, 128, 64), GpuScale{0, 1, 1}),
               std::invalid_argument);
}

TEST(GemmShapeDistance, IsTheEuclideanDistanceOfTheLog2Sizes) {
  const GemmProblem wanted = gemm_shape(4096, 4096, 4096);
  EXPECT_DOUBLE_EQ(*shape_distance(wanted, wanted), 0.0);
  EXPECT_DOUBLE_EQ(*shape_distance(wanted, gemm_shape(2048, 4096, 4096)), 1.0);
  EXPECT_DOUBLE_EQ(*shape_distance(wanted, gemm_shape(4096, 4096, 16384)), 2.0);
  EXPECT_DOUBLE_EQ(*shape_distance(wanted, gemm_shape(8192, 8192, 8192)), std::sqrt(3.0));
  // Two axes off by 2 and 4 times: sqrt(1 + 4).
  EXPECT_DOUBLE_EQ(*shape_distance(wanted, gemm_shape(4096, 2048, 1024)), std::sqrt(5.0));
  EXPECT_NEAR(
      *shape_distance(gemm_shape(1000, 1016, 264), gemm_shape(1024, 1024, 256)),
      std::sqrt(std::pow(std::log2(1000.0 / 1024), 2) + std::pow(std::log2(1016.0 / 1024), 2) +
                std::pow(std::log2(264.0 / 256), 2)),
      1e-12);
}

TEST(GemmShapeDistance, IsSymmetricAndNeedsTheSameDtype) {
  const GemmProblem a = gemm_shape(333, 200, 264);
  const GemmProblem b = gemm_shape(8192, 1024, 64);
  EXPECT_DOUBLE_EQ(*shape_distance(a, b), *shape_distance(b, a));
  EXPECT_FALSE(shape_distance(a, gemm_shape(333, 200, 264, DataType::bf16)));
  EXPECT_TRUE(shape_distance(gemm_shape(64, 64, 64, DataType::bf16),
                             gemm_shape(128, 64, 64, DataType::bf16)));
}

}  // namespace
}  // namespace swr::test
