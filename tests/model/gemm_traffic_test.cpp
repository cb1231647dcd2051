// The GEMM's L2 replay: what it requests is the tile schedule's reads, what fits misses once, a
// band of the block swizzle misses less than the plain order where the L2 is small, a cluster
// reads its multicast operand once, and the predictions rank a space by the time model.
#include <gtest/gtest.h>

#include "model/gemm_prediction.hpp"
#include "model/gemm_traffic.hpp"
#include "model_test_support.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

using testing::builtin;
using testing::small_gpu;

GemmConfig gemm(const char* key) {
  return GemmConfig::from_key(key).value();
}

TEST(GemmTraffic, RequestsTheScheduleAndMissesOnceWhatFits) {
  // 512^3 in 128 x 128 x 32 tiles: every A tile is read by the 4 tile columns, every B tile by
  // the 4 tile rows; 1.5 MiB of A, B and C fit any L2 here.
  const GemmProblem problem{512, 512, 512, DataType::f16};
  const GemmTraffic traffic =
      simulate_gemm_l2(problem, gemm("m128n128k32w2x4s3-grid-swz0"), builtin("h200"), 264);
  const std::int64_t matrix_sectors = 512 * 512 * 2 / 32;
  EXPECT_EQ(traffic.compulsory_misses, 3 * matrix_sectors);
  EXPECT_EQ(traffic.requested_sectors, 4 * matrix_sectors + 4 * matrix_sectors + matrix_sectors);
  EXPECT_EQ(traffic.misses, traffic.compulsory_misses);
  EXPECT_EQ(traffic.dram_bytes_read, 2 * matrix_sectors * 32);
  EXPECT_EQ(traffic.dram_bytes_written, matrix_sectors * 32);
  EXPECT_EQ(traffic.resident_ctas, 16);  // one per tile
}

TEST(GemmTraffic, ABandOfTheSwizzleMissesLessWhereTheL2IsSmall) {
  // 2048^3, 16 x 16 tiles of 128: in plain order a wave of 16 CTAs is one row of tiles, reading
  // all of B (8 MiB) while the L2 holds 1 MiB; bands of 4 columns keep a band's B in the L2.
  const GpuProfile gpu = small_gpu(1 << 20, 16);
  const GemmProblem problem{2048, 2048, 2048, DataType::f16};
  const GemmTraffic plain =
      simulate_gemm_l2(problem, gemm("m128n128k32w2x4s3-static-swz0"), gpu, 16);
  const GemmTraffic banded =
      simulate_gemm_l2(problem, gemm("m128n128k32w2x4s3-static-swzn512"), gpu, 16);
  EXPECT_EQ(plain.requested_sectors, banded.requested_sectors);
  EXPECT_EQ(plain.compulsory_misses, banded.compulsory_misses);
  EXPECT_LT(banded.misses, plain.misses);
  EXPECT_GT(plain.misses, plain.compulsory_misses);
}

TEST(GemmTraffic, AClusterReadsItsMulticastOperandOnce) {
  const GemmProblem problem{1024, 1024, 1024, DataType::f16};
  const GpuProfile h200 = builtin("h200");
  const GemmTraffic single = simulate_gemm_l2(
      problem, gemm("wgmma-m128n256k64s3-cooperative-c1x1-static-swz0"), h200, 132);
  const GemmTraffic pair = simulate_gemm_l2(
      problem, gemm("wgmma-m128n256k64s3-cooperative-c2x1-static-swz0"), h200, 132);
  // 2x1 multicasts B: A is still read per CTA (8 tile rows x 4 columns), B per pair of rows.
  const std::int64_t matrix_sectors = 1024 * 1024 * 2 / 32;
  EXPECT_EQ(single.requested_sectors, 4 * matrix_sectors + 8 * matrix_sectors + matrix_sectors);
  EXPECT_EQ(pair.requested_sectors, 4 * matrix_sectors + 4 * matrix_sectors + matrix_sectors);
}

TEST(GemmTraffic, RefusesAReplayOverItsBudget) {
  const GemmProblem problem{4096, 4096, 4096, DataType::f16};
  EXPECT_THROW(
      simulate_gemm_l2(problem, gemm("m128n128k32w2x4s3-grid-swz0"), builtin("gb10"), 48, 1000),
      UsageError);
}

TEST(GemmPrediction, RanksStridesAndSaysWhatDoesNotRun) {
  const GemmProblem problem{8192, 8192, 8192, DataType::f16};
  const std::vector<GemmConfig> configs = {
      gemm("m128n128k32w2x4s3-static-swz0"), gemm("m128n128k32w2x4s3-static-swzn1024"),
      gemm("wgmma-m128n256k64s3-cooperative-c1x1-static-swz0")};  // not on sm_121
  const std::vector<GemmPrediction> predictions =
      predict_gemm_space(problem, builtin("gb10"), configs, embedded_time_model(), 2);
  ASSERT_EQ(predictions.size(), 3u);
  EXPECT_TRUE(predictions[0].runnable);
  EXPECT_FALSE(predictions[2].runnable);
  EXPECT_NE(predictions[2].note.find("does not run on gb10"), std::string::npos);
  EXPECT_GT(predictions[0].traffic.misses, predictions[1].traffic.misses);
  EXPECT_GT(predictions[0].time.seconds, predictions[1].time.seconds);
  const std::string table =
      format_gemm_prediction_table(problem, builtin("gb10"), predictions, "accuracy line");
  EXPECT_NE(table.find("m128n128k32w2x4s3-static-swz0: n1024"), std::string::npos) << table;
  EXPECT_NE(table.find("not run: wgmma-"), std::string::npos) << table;
}

}  // namespace
}  // namespace swr::model
