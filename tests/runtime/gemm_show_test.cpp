// `swr-tune show --family gemm`, run as a user runs it, on a real SQLite file: every variant of a
// GEMM shape with its ratio to the cuBLAS time stored with it, the failed ones, and per kernel
// binary how much the block swizzle mattered; the GEMM-only summary; and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_swr_tune.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class GemmShowTest : public ::testing::Test {
 protected:
  GemmShowTest() : tuned_(database_) {
    // One binary under two tile orders (1.0 ms and 0.8 ms: 20% sensitivity), another binary, a
    // failure, and an attention shape the GEMM views must leave out.
    add_with_cublas("m128n256k64w2x4s3-grid-swz0", 1.0);
    add_with_cublas("m128n256k64w2x4s3-grid-swzn1792", 0.8);
    add_with_cublas("m128n128k32w2x4s3-grid-swz0", 1.6);
    tuned_.add_failure(shape_, "m64n64k32w2x2s2-grid-swz0");
    tuned_.add(attention_shape(8, 1, 4096, 64), "m128n64w8s2-cyclic-grid-head_major", 2.0);
  }

  // A valid measurement whose method carries cuBLAS's time in the same run (0.4 ms), as the
  // tuner stores it.
  void add_with_cublas(const std::string& key, double median_ms) {
    db::MeasurementRecord record;
    db::ResultsDatabase& database = tuned_.database();
    record.gpu = tuned_.gpu();
    record.problem = database.upsert_problem(shape_);
    record.config = database.upsert_config(gemm_config_named(key));
    record.status = db::MeasurementStatus::ok;
    record.median_ms = median_ms;
    record.timed_runs = 10;
    record.tflops = shape_.flops() / (median_ms * 1e-3) / 1e12;
    record.method = {{"l2", "flushed"}, {"cublas_median_ms", 0.4}, {"cublas_version", "13.1.0"}};
    record.source_hash = "hash-" + key;
    record.toolkit_version = "13.0";
    record.driver_version = "580.65";
    database.record_measurement(record);
  }

  ProcessResult show(std::vector<std::string> options) const {
    std::vector<std::string> arguments = {"show", "--db", database_.string()};
    arguments.insert(arguments.end(), options.begin(), options.end());
    return run_swr_tune(arguments);
  }

  TemporaryDirectory directory_;
  const std::filesystem::path database_ = directory_.path() / "results.db";
  TunedDatabase tuned_;
  const GemmProblem shape_ = gemm_shape(4096, 4096, 4096);
};

TEST_F(GemmShowTest, ListsEveryVariantAgainstCublasAndTheSwizzleEffect) {
  const ProcessResult result = show({"--family", "gemm", "--gpu", "h200", "--size", "4096"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string& out = result.out;
  EXPECT_TRUE(contains(out, "m4096_n4096_k4096_f16 on h200")) << out;
  EXPECT_TRUE(contains(out, "4 variants measured, 1 failed")) << out;
  EXPECT_TRUE(contains(out, "cuBLAS")) << out;
  // 0.4 ms of cuBLAS against 0.8, 1.0 and 1.6 ms, fastest first.
  const std::size_t fastest = out.find("m128n256k64w2x4s3-grid-swzn1792");
  const std::size_t slowest = out.find("m128n128k32w2x4s3-grid-swz0");
  ASSERT_NE(fastest, std::string::npos) << out;
  ASSERT_NE(slowest, std::string::npos) << out;
  EXPECT_LT(fastest, slowest);
  EXPECT_TRUE(contains(out, "0.500")) << out;
  EXPECT_TRUE(contains(out, "0.250")) << out;
  EXPECT_TRUE(contains(out, "failed m64n64k32w2x2s2-grid-swz0: wrong_result")) << out;
  EXPECT_TRUE(contains(out, "block swizzle per tile binary")) << out;
  EXPECT_TRUE(contains(out, "swzn1792")) << out;
  EXPECT_TRUE(contains(out, "20.0%")) << out;
}

TEST_F(GemmShowTest, PrintsJson) {
  const ProcessResult result =
      show({"--family", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json["results"].size(), 1u);
  const nlohmann::json& shown = json["results"][0];
  EXPECT_EQ(shown["problem"]["family"], "gemm");
  EXPECT_DOUBLE_EQ(shown["cublas"]["median_ms"].get<double>(), 0.4);
  EXPECT_EQ(shown["variants"].size(), 4u);
  ASSERT_EQ(shown["swizzle"].size(), 2u);
  const nlohmann::json& first = shown["swizzle"][0];
  EXPECT_EQ(first["binary"], "m128n256k64w2x4s3-grid");
  EXPECT_EQ(first["best_config"], "m128n256k64w2x4s3-grid-swzn1792");
  EXPECT_EQ(first["orders"], 2);
  EXPECT_NEAR(first["sensitivity"].get<double>(), 0.2, 1e-9);
}

TEST_F(GemmShowTest, SaysWhenAShapeHasNoResults) {
  const ProcessResult result = show({"--family", "gemm", "--size", "2048"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "no results for gemm m2048_n2048_k2048_f16")) << result.out;
}

TEST_F(GemmShowTest, TheSummaryOfTheGemmFamilyLeavesAttentionOut) {
  const ProcessResult result = show({"--family", "gemm"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "m4096_n4096_k4096_f16")) << result.out;
  EXPECT_FALSE(contains(result.out, "b8_h1_sq4096")) << result.out;  // the attention shape
  const ProcessResult both = show({});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_TRUE(contains(both.out, "m4096_n4096_k4096_f16")) << both.out;
  EXPECT_TRUE(contains(both.out, "b8_h1_sq4096")) << both.out;
}

TEST_F(GemmShowTest, RefusesMixedOrBadOptionsWithExitTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"--family", "gemm", "--seq", "4096"},
      {"--size", "4096"},
      {"--family", "gemm", "--size", "4096", "--m", "4096"},
      {"--family", "gemm", "--m", "4096", "--n", "4095", "--k", "4096"},
      {"--family", "gemm", "--size", "0"},
      {"--family", "matmul"},
  };
  for (const std::vector<std::string>& options : bad) {
    const ProcessResult result = show(options);
    EXPECT_EQ(result.exit_code, 2) << options.back() << ": " << result.out << result.err;
    EXPECT_EQ(lines_of(result.err).size(), 1u) << result.err;
  }
}

}  // namespace
}  // namespace swr::test
