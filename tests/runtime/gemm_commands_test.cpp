// swr-tune query/export/import and the GEMM example program with GEMM shapes, run as a user runs
// them (child processes). The export that compiles for real needs NVRTC, not a GPU.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "driver/cuda_driver.hpp"
#include "run_swr_tune.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/device_buffer.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

constexpr const char* kGrid = "m128n128k32w2x4s3-grid-swz0";
constexpr const char* kStatic = "m128n256k64w2x4s3-static-swzm512";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class GemmCommandsTest : public ::testing::Test {
 protected:
  GemmCommandsTest() : tuned_(database_) {
    tuned_.add(big_, kStatic, 1.0);
    tuned_.add(big_, kGrid, 1.2);
    tuned_.add(small_, kGrid, 0.02);
    tuned_.add(attention_shape(8, 1, 4096, 64), "m128n64w8s2-cyclic-grid-head_major", 2.0);
  }

  std::vector<std::string> query(std::vector<std::string> shape) const {
    std::vector<std::string> arguments = {"query", "--family", "gemm", "--gpu", "h200"};
    arguments.insert(arguments.end(), shape.begin(), shape.end());
    if (std::find(shape.begin(), shape.end(), "--export") == shape.end()) {
      arguments.insert(arguments.end(), {"--db", database_.string()});
    }
    return arguments;
  }

  TemporaryDirectory directory_;
  const std::filesystem::path database_ = directory_.path() / "results.db";
  TunedDatabase tuned_;
  const GemmProblem big_ = gemm_shape(4096, 4096, 4096);
  const GemmProblem small_ = gemm_shape(512, 512, 512);
};

TEST_F(GemmCommandsTest, QueryTellsExactNearestAndNone) {
  ProcessResult result = run_swr_tune(query({"--size", "4096"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "m4096_n4096_k4096_f16 on h200: exact")) << result.out;
  EXPECT_TRUE(contains(result.out, std::string("variant   ") + kStatic)) << result.out;
  EXPECT_TRUE(contains(result.out, "1.000 ms median")) << result.out;
  EXPECT_TRUE(contains(result.out, "from      results database " + database_.string()));

  result = run_swr_tune(query({"--m", "3000", "--n", "4096", "--k", "4096"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out,
                       "m3000_n4096_k4096_f16 on h200: nearest (tuned shape "
                       "m4096_n4096_k4096_f16, distance 0.45)"))
      << result.out;

  result = run_swr_tune(query({"--size", "4096", "--dtype", "bf16"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "m4096_n4096_k4096_bf16 on h200: none")) << result.out;
  EXPECT_TRUE(contains(result.out, "nothing tuned on h200 with GEMM bf16")) << result.out;
}

TEST_F(GemmCommandsTest, QueryPrintsJson) {
  const ProcessResult result =
      run_swr_tune(query({"--m", "1000", "--n", "1016", "--k", "264", "--json"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json output = nlohmann::json::parse(result.out);
  EXPECT_EQ(output.at("family"), "gemm");
  EXPECT_EQ(output.at("match"), "nearest");
  EXPECT_EQ(output.at("asked"), (nlohmann::json{{"key", "m1000_n1016_k264_f16"},
                                                {"m", 1000},
                                                {"n", 1016},
                                                {"k", 264},
                                                {"dtype", "f16"}}));
  EXPECT_EQ(output.at("tuned_shape"), small_.key());
  EXPECT_GT(output.at("distance").get<double>(), 0);
  const nlohmann::json& kernel = output.at("kernel");
  EXPECT_EQ(kernel.at("config_key"), kGrid);
  EXPECT_EQ(kernel.at("config").at("persistence"), "grid");
  EXPECT_EQ(kernel.at("problem").at("m"), 512);
  EXPECT_DOUBLE_EQ(kernel.at("measured").at("median_ms").get<double>(), 0.02);
  EXPECT_EQ(kernel.at("gpu").at("arch"), "sm_90a");
  EXPECT_EQ(output.at("gpu"), "h200");
  EXPECT_EQ(output.at("source"), "results database " + database_.string());
}

TEST_F(GemmCommandsTest, TheAttentionQueryStillAnswersBesideGemmRows) {
  const ProcessResult result = run_swr_tune(
      {"query", "--gpu", "h200", "--seq", "4096", "--db", database_.string(), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json output = nlohmann::json::parse(result.out);
  EXPECT_EQ(output.at("family"), "attention");
  EXPECT_EQ(output.at("match"), "exact");
}

TEST_F(GemmCommandsTest, QueryReadsAnExportWithBothFamilies) {
  ExportOptions options;
  options.gpu = "h200";
  options.out_dir = directory_.path() / "export";
  export_kernels(tuned_.database(), FakeCubinBuilder(), options);
  ProcessResult result =
      run_swr_tune(query({"--size", "512", "--export", options.out_dir.string()}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, ": exact")) << result.out;
  EXPECT_TRUE(contains(result.out, "from      export " + options.out_dir.string())) << result.out;
  result = run_swr_tune(
      {"query", "--gpu", "h200", "--seq", "4096", "--export", options.out_dir.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, ": exact")) << result.out;
}

// The one test here that compiles for real: the measured build is NVRTC's, so export finds it
// unchanged in the cubin cache the test filled, and the export answers query and import.
TEST_F(GemmCommandsTest, ExportsARealGemmCubinThatQueryAndImportRead) {
  const std::filesystem::path cache = directory_.path() / "cubins";
  std::unique_ptr<CubinBuilder> builder;
  try {
    builder = make_nvrtc_cubin_builder(cache);
  } catch (const std::runtime_error& error) {
    GTEST_SKIP() << error.what();
  }
  const GemmProblem shape = gemm_shape(2048, 1024, 512, DataType::bf16);
  const char* config = "m128n128k32w2x4s3-static-swzn512";
  const BuiltCubin built = builder->build(shape, gemm_config_named(config), "sm_90a");
  TunedDatabase real(directory_.path() / "real.db");
  real.add(shape, config, 0.05, "", built.source_hash);

  const std::filesystem::path out = directory_.path() / "real-export";
  ProcessResult result = run_swr_tune({"export", "--gpu", "h200", "--db", real.path().string(),
                                       "--out", out.string(), "--cache-dir", cache.string()});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(contains(result.out, "m2048_n1024_k512_bf16  " + std::string(config))) << result.out;
  EXPECT_TRUE(contains(result.out,
                       "exported 1 shapes (0 attention, 0 attention-backward, 1 GEMM; 1 cubins, 1 "
                       "from the cubin cache)"))
      << result.out;
  const nlohmann::json manifest = nlohmann::json::parse(std::ifstream(out / "manifest.json"));
  EXPECT_EQ(manifest.at("schema_version"), 2);
  const nlohmann::json& kernel = manifest.at("gemm_kernels").at(0);
  EXPECT_EQ(kernel.at("compiled_source_hash"), built.source_hash);
  EXPECT_EQ(kernel.at("cubin").at("bytes"), built.cubin.size());
  EXPECT_EQ(kernel.at("cubin").at("file"), "gemm-m128n128k32w2x4s3-static_bf16-sm_90a.cubin");
  EXPECT_EQ(kernel.at("grid").at("rule"), "static");

  // --family gemm exports the same (from the cache); --family attention finds nothing: exit 2.
  const std::filesystem::path gemm_out = directory_.path() / "gemm-export";
  result =
      run_swr_tune({"export", "--family", "gemm", "--gpu", "h200", "--db", real.path().string(),
                    "--out", gemm_out.string(), "--cache-dir", cache.string()});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(contains(result.out,
                       "exported 1 shapes (0 attention, 0 attention-backward, 1 GEMM; 1 cubins, 1 "
                       "from the cubin cache)"))
      << result.out;
  const std::filesystem::path attention_out = directory_.path() / "attention-export";
  result = run_swr_tune({"export", "--family", "attention", "--gpu", "h200", "--db",
                         real.path().string(), "--out", attention_out.string(), "--cache-dir",
                         cache.string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "nothing of the attention family tuned on it")) << result.err;
  EXPECT_FALSE(std::filesystem::exists(attention_out));

  result = run_swr_tune(query(
      {"--m", "2000", "--n", "1024", "--k", "520", "--dtype", "bf16", "--export", out.string()}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, ": nearest (tuned shape " + shape.key())) << result.out;

  const std::filesystem::path merged = directory_.path() / "merged.db";
  result = run_swr_tune({"import", "--db", merged.string(), out.string(), database_.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "(export): 1 measurements, 1 added")) << result.out;
  EXPECT_TRUE(contains(result.out, "(results database): 4 measurements, 4 added")) << result.out;
  result = run_swr_tune({"query", "--family", "gemm", "--gpu", "h200", "--m", "2048", "--n", "1024",
                         "--k", "512", "--dtype", "bf16", "--db", merged.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, ": exact")) << result.out;
  EXPECT_TRUE(contains(result.out, config)) << result.out;
}

TEST_F(GemmCommandsTest, TheExampleLooksUpWithoutADevice) {
  if (gemm_example_path().empty()) GTEST_SKIP() << "SWR_BUILD_EXAMPLES is off";
  if (CudaDriver::try_get() != nullptr && cuda_device_present()) {
    GTEST_SKIP() << "a device is present: the GPU tests run the example";
  }
  ProcessResult result = run_gemm_example(
      {"--db", database_.string(), "--gpu", "h200", "--m", "3000", "--n", "4096", "--k", "4096"});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(contains(result.out, "problem: m3000_n4096_k4096_f16")) << result.out;
  EXPECT_TRUE(contains(result.out, "lookup: nearest, variant " + std::string(kStatic) +
                                       " tuned for m4096_n4096_k4096_f16 on h200"))
      << result.out;
  EXPECT_TRUE(contains(result.out, "launch: skipped")) << result.out;
  result = run_gemm_example({"--db", database_.string(), "--gpu", "h200", "--require-gpu"});
  EXPECT_EQ(result.exit_code, 1) << result.out;
}

TEST_F(GemmCommandsTest, TheExampleRefusesBadArguments) {
  if (gemm_example_path().empty()) GTEST_SKIP() << "SWR_BUILD_EXAMPLES is off";
  EXPECT_EQ(run_gemm_example({}).exit_code, 2);
  EXPECT_EQ(run_gemm_example({"--db", database_.string(), "--m", "-4"}).exit_code, 2);
  const ProcessResult unaligned = run_gemm_example({"--db", database_.string(), "--n", "1001"});
  EXPECT_EQ(unaligned.exit_code, 2);
  EXPECT_TRUE(contains(unaligned.err, "multiple of 8")) << unaligned.err;
  EXPECT_EQ(run_gemm_example({"--db", database_.string(), "--dtype", "f32"}).exit_code, 2);
  EXPECT_EQ(run_gemm_example({"--db", (directory_.path() / "missing.db").string()}).exit_code, 2);
  EXPECT_EQ(run_gemm_example({"--bogus"}).exit_code, 2);
}

}  // namespace
}  // namespace swr::test
