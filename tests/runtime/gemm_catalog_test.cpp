// TunedCatalog for GEMM shapes on real SQLite files: exact, nearest (log2 distance, same dtype
// only, ties to the smaller key) and none with why, the answers kept in memory, and the two
// families kept apart in one file.
#include <gtest/gtest.h>

#include <cmath>

#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

using swr::testing::TemporaryDirectory;

constexpr const char* kGrid = "m128n128k32w2x4s3-grid-swz0";
constexpr const char* kGridBands = "m128n128k32w2x4s3-grid-swzn1792";  // the same binary
constexpr const char* kStatic = "m128n256k64w2x4s3-static-swzm512";
constexpr const char* kSmall = "m64n64k32w2x2s2-grid-swz0";
constexpr const char* kAttention = "m128n64w8s2-cyclic-grid-head_major";

class GemmCatalogTest : public ::testing::Test {
 protected:
  GemmCatalogTest() : tuned_(directory_.path() / "results.db") {
    tuned_.add(big_, kStatic, 1.0);
    tuned_.add(big_, kGrid, 1.2);
    tuned_.add(tall_, kGrid, 0.30);
    tuned_.add(tall_, kGridBands, 0.25);
    tuned_.add(small_, kSmall, 0.02);
    tuned_.add(bf16_, kGrid, 0.2);
    tuned_.add(attention_, kAttention, 3.0);
  }

  TemporaryDirectory directory_;
  TunedDatabase tuned_;
  const GemmProblem big_ = gemm_shape(4096, 4096, 4096);
  const GemmProblem tall_ = gemm_shape(8192, 1024, 1024);
  const GemmProblem small_ = gemm_shape(512, 512, 512);
  const GemmProblem bf16_ = gemm_shape(2048, 2048, 2048, DataType::bf16);
  const AttentionProblem attention_ = attention_shape(8, 1, 4096, 64);
};

TEST_F(GemmCatalogTest, AnswersATunedShapeExactly) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const TunedGemmChoice choice = catalog.best("h200", big_);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice.match, MatchKind::exact);
  EXPECT_EQ(choice.distance, 0);
  const TunedGemmKernel& kernel = *choice.kernel;
  EXPECT_EQ(kernel.config_key, kStatic);
  EXPECT_EQ(kernel.config, gemm_config_named(kStatic));
  EXPECT_EQ(kernel.config.persistence, GemmPersistence::static_loop);
  EXPECT_EQ(kernel.problem, big_);
  EXPECT_EQ(kernel.gpu, "h200");
  EXPECT_EQ(kernel.arch, "sm_90a");
  EXPECT_EQ(kernel.sm_count, 132);
  EXPECT_EQ(kernel.device_name, h200_record().device_name);
  EXPECT_DOUBLE_EQ(kernel.measured.median_ms, 1.0);
  EXPECT_DOUBLE_EQ(*kernel.measured.p95_ms, 1.02);
  EXPECT_NEAR(*kernel.measured.tflops, big_.flops() / 1e-3 / 1e12, 1e-9);
  EXPECT_EQ(kernel.source_hash, fake_source_hash(big_, gemm_config_named(kStatic), "sm_90a"));
  EXPECT_EQ(kernel.toolkit_version, "13.0");
  // stages x (A tile + B tile) x 2 bytes: 3 x (128 x 64 + 64 x 256) x 2.
  EXPECT_EQ(kernel.dynamic_shared_bytes, 3 * (128 * 64 + 64 * 256) * 2);
  EXPECT_FALSE(kernel.measured.measured_at.empty());
}

TEST_F(GemmCatalogTest, TakesTheFastestVariantEvenWhenOnlyTheSwizzleDiffers) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const TunedGemmChoice choice = catalog.best("h200", tall_);
  ASSERT_EQ(choice.match, MatchKind::exact);
  EXPECT_EQ(choice.kernel->config_key, kGridBands);
  EXPECT_EQ(choice.kernel->config.swizzle_stride, 1792);
}

TEST_F(GemmCatalogTest, AnswersAnUntunedShapeByTheNearestOfTheSameDtype) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  // Odd sizes near 4096^3: only m differs by more than a rounding.
  const TunedGemmChoice near_big = catalog.best("h200", gemm_shape(3000, 4096, 4096));
  ASSERT_TRUE(near_big);
  EXPECT_EQ(near_big.match, MatchKind::nearest);
  EXPECT_EQ(near_big.kernel->problem, big_);
  EXPECT_EQ(near_big.kernel->config_key, kStatic);
  EXPECT_NEAR(near_big.distance, std::log2(4096.0 / 3000.0), 1e-12);
  // 2048^3: 4096^3 is sqrt(3) away, 8192 x 1024 x 1024 sqrt(6), 512^3 2 sqrt(3); the bf16 shape
  // of exactly this size does not count.
  const TunedGemmChoice middle = catalog.best("h200", gemm_shape(2048, 2048, 2048));
  ASSERT_TRUE(middle);
  EXPECT_EQ(middle.kernel->problem, big_);
  EXPECT_NEAR(middle.distance, std::sqrt(3.0), 1e-12);
  // 1024^3: 512^3 is sqrt(3) away, 8192 x 1024 x 1024 is 3.
  const TunedGemmChoice small = catalog.best("h200", gemm_shape(1024, 1024, 1024));
  ASSERT_TRUE(small);
  EXPECT_EQ(small.kernel->problem, small_);
  EXPECT_EQ(small.kernel->config_key, kSmall);
  // bf16 asks only bf16 shapes, however far.
  const TunedGemmChoice bf16 = catalog.best("h200", gemm_shape(64, 64, 64, DataType::bf16));
  ASSERT_TRUE(bf16);
  EXPECT_EQ(bf16.kernel->problem, bf16_);
  EXPECT_NEAR(bf16.distance, 5 * std::sqrt(3.0), 1e-12);
}

TEST_F(GemmCatalogTest, EqualDistancesGoToTheSmallerShapeKey) {
  TunedDatabase ties(directory_.path() / "ties.db");
  ties.add(gemm_shape(2048, 1024, 1024), kGrid, 0.1);
  ties.add(gemm_shape(1024, 2048, 1024), kSmall, 0.1);
  const TunedGemmChoice choice =
      TunedCatalog::open_database(ties.path()).best("h200", gemm_shape(1024, 1024, 1024));
  ASSERT_TRUE(choice);
  EXPECT_DOUBLE_EQ(choice.distance, 1.0);
  EXPECT_EQ(choice.kernel->problem.key(), "m1024_n2048_k1024_f16");  // < "m2048_n1024_..."
}

TEST_F(GemmCatalogTest, SaysWhyWhenNothingCanServeTheShape) {
  TunedDatabase f16_only(directory_.path() / "f16.db");
  f16_only.add(big_, kGrid, 1.0);
  f16_only.add(attention_shape(8, 1, 4096, 64, false, DataType::bf16), kAttention, 1.0);
  const TunedGemmChoice bf16 = TunedCatalog::open_database(f16_only.path())
                                   .best("h200", gemm_shape(4096, 4096, 4096, DataType::bf16));
  EXPECT_FALSE(bf16);
  EXPECT_EQ(bf16.match, MatchKind::none);
  EXPECT_EQ(bf16.kernel, nullptr);
  EXPECT_NE(bf16.why_none.find("nothing tuned on h200 with GEMM bf16"), std::string::npos)
      << bf16.why_none;

  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const TunedGemmChoice other_gpu = catalog.best("gb10", big_);
  EXPECT_EQ(other_gpu.match, MatchKind::none);
  EXPECT_NE(other_gpu.why_none.find("no results for GPU 'gb10'"), std::string::npos);
  EXPECT_NE(other_gpu.why_none.find("h200"), std::string::npos) << other_gpu.why_none;
}

TEST_F(GemmCatalogTest, AShapeWhoseVariantsAllFailedIsNoCandidate) {
  TunedDatabase broken(directory_.path() / "broken.db");
  broken.add_failure(big_, kGrid);
  broken.add(attention_, kAttention, 1.0);
  const TunedCatalog catalog = TunedCatalog::open_database(broken.path());
  EXPECT_EQ(catalog.best("h200", big_).match, MatchKind::none);
  EXPECT_EQ(catalog.best("h200", gemm_shape(4000, 4096, 4096)).match, MatchKind::none);
}

TEST_F(GemmCatalogTest, TheFamiliesDoNotStandInForEachOther) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const TunedChoice attention = catalog.best("h200", attention_);
  ASSERT_EQ(attention.match, MatchKind::exact);
  EXPECT_EQ(attention.kernel->config_key, kAttention);
  // An attention-only file answers no GEMM, and the other way round.
  TunedDatabase attention_only(directory_.path() / "attention.db");
  attention_only.add(attention_, kAttention, 1.0);
  EXPECT_EQ(TunedCatalog::open_database(attention_only.path()).best("h200", big_).match,
            MatchKind::none);
  TunedDatabase gemm_only(directory_.path() / "gemm.db");
  gemm_only.add(big_, kGrid, 1.0);
  EXPECT_EQ(TunedCatalog::open_database(gemm_only.path()).best("h200", attention_).match,
            MatchKind::none);
  EXPECT_EQ(TunedCatalog::open_database(gemm_only.path()).gpu_names(),
            std::vector<std::string>{"h200"});
}

TEST_F(GemmCatalogTest, AnswersFromMemoryAfterTheFirstLookup) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  ASSERT_EQ(catalog.best("h200", big_).kernel->config_key, kStatic);
  tuned_.add(big_, kGridBands, 0.5);  // a faster variant, written after the first answer
  EXPECT_EQ(catalog.best("h200", big_).kernel->config_key, kStatic);
  const TunedCatalog copy = catalog;
  EXPECT_EQ(copy.best("h200", big_).kernel, catalog.best("h200", big_).kernel);  // shared
  catalog.forget_answers();
  EXPECT_EQ(catalog.best("h200", big_).kernel->config_key, kGridBands);
}

TEST_F(GemmCatalogTest, RefusesAnInvalidProblem) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  EXPECT_THROW(catalog.best("h200", gemm_shape(4096, 1001, 4096)), UsageError);
  EXPECT_THROW(catalog.best("h200", gemm_shape(0, 4096, 4096)), UsageError);
}

}  // namespace
}  // namespace swr::test
