// swr-tune query, export and import, and the example program, run as a user runs them (child
// processes). The export that compiles for real needs NVRTC (present on the build machine), not a
// GPU.
#include <gtest/gtest.h>
#include <fstream>
#include <nlohmann/json.hpp>

#include "driver/cuda_driver.hpp"
#include "generator/cubin_cache.hpp"
#include "run_swr_tune.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/device_buffer.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

constexpr const char* kGrid = "m128n64w8s2-cyclic-grid-head_major";
constexpr const char* kStatic = "m128n64w8s2-sawtooth-static-head_major";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool device_present() {
  return CudaDriver::try_get() != nullptr && cuda_device_present();
}

class RuntimeCommandsTest : public ::testing::Test {
 protected:
  RuntimeCommandsTest() : tuned_(database_) {
    tuned_.add(fits_, kGrid, 1.0);
    tuned_.add(fits_, kStatic, 1.2);
    tuned_.add(streams_, kStatic, 4.0);
  }

  std::vector<std::string> with_db(std::vector<std::string> arguments) const {
    arguments.push_back("--db");
    arguments.push_back(database_.string());
    return arguments;
  }

  TemporaryDirectory directory_;
  const std::filesystem::path database_ = directory_.path() / "results.db";
  TunedDatabase tuned_;
  const AttentionProblem fits_ = attention_shape(8, 1, 57344, 128);
  const AttentionProblem streams_ = attention_shape(8, 1, 131072, 128);
};

TEST_F(RuntimeCommandsTest, QueryTellsExactNearestAndNone) {
  ProcessResult result =
      run_swr_tune(with_db({"query", "--gpu", "h200", "--seq", "57344", "--head-dim", "128"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, fits_.key() + " on h200: exact")) << result.out;
  EXPECT_TRUE(contains(result.out, std::string("variant   ") + kGrid)) << result.out;
  EXPECT_TRUE(contains(result.out, "1.000 ms median")) << result.out;

  result = run_swr_tune(with_db({"query", "--gpu", "h200", "--seq", "65536", "--head-dim", "128"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, ": nearest (tuned shape " + streams_.key() + ", distance 2.00)"))
      << result.out;
  EXPECT_TRUE(contains(result.out, kStatic)) << result.out;

  result = run_swr_tune(with_db({"query", "--gpu", "h200", "--seq", "65536", "--causal"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, ": none")) << result.out;
  EXPECT_TRUE(contains(result.out, "head dim 64, f16, causal")) << result.out;
}

TEST_F(RuntimeCommandsTest, QueryPrintsJson) {
  const ProcessResult result = run_swr_tune(with_db(
      {"query", "--gpu", "h200", "--seq", "49152", "--head-dim", "128", "--batch", "8", "--json"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json output = nlohmann::json::parse(result.out);
  EXPECT_EQ(output.at("match"), "nearest");
  EXPECT_EQ(output.at("tuned_shape"), fits_.key());
  EXPECT_EQ(output.at("asked").at("seq_q"), 49152);
  EXPECT_EQ(output.at("kernel").at("config_key"), kGrid);
  EXPECT_EQ(output.at("kernel").at("config").at("persistence"), "grid");
  EXPECT_DOUBLE_EQ(output.at("kernel").at("measured").at("median_ms").get<double>(), 1.0);
  EXPECT_GT(output.at("distance").get<double>(), 0);
  EXPECT_EQ(output.at("gpu"), "h200");
}

TEST_F(RuntimeCommandsTest, QueryReadsAnExport) {
  ExportOptions options;
  options.gpu = "h200";
  options.out_dir = directory_.path() / "export";
  export_kernels(tuned_.database(), FakeCubinBuilder(), options);
  const ProcessResult result =
      run_swr_tune({"query", "--gpu", "h200", "--seq", "131072", "--head-dim", "128", "--export",
                    options.out_dir.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, ": exact")) << result.out;
  EXPECT_TRUE(contains(result.out, "from      export " + options.out_dir.string())) << result.out;
}

TEST_F(RuntimeCommandsTest, QueryRefusesBadInput) {
  for (const std::vector<std::string>& arguments :
       {with_db({"query", "--seq", "1024"}), with_db({"query", "--gpu", "h200"}),
        with_db({"query", "--gpu", "h200", "--seq", "0"}),
        with_db({"query", "--gpu", "h200", "--seq", "1024", "--head-dim", "48"}),
        with_db({"query", "--gpu", "h200", "--seq", "1024", "--dtype", "f32"}),
        with_db({"query", "--gpu", "h200", "--seq", "1024", "--export", "x"}),
        std::vector<std::string>{"query", "--gpu", "h200", "--seq", "1024", "--db",
                                 (directory_.path() / "missing.db").string()}}) {
    const ProcessResult result = run_swr_tune(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments.back() << "\n" << result.out << result.err;
    EXPECT_EQ(lines_of(result.err).size(), 1u) << result.err;
  }
}

TEST_F(RuntimeCommandsTest, ExportRefusesBadInputAndWritesNothing) {
  const std::string out = (directory_.path() / "export").string();
  const std::filesystem::path file = directory_.path() / "a-file";
  { std::ofstream(file) << "x"; }
  for (const std::vector<std::string>& arguments :
       {with_db({"export", "--gpu", "h200"}), with_db({"export", "--out", out}),
        with_db({"export", "--gpu", "gb10", "--out", out}),
        with_db({"export", "--gpu", "h200", "--out", file.string()}),
        with_db({"export", "--family", "matmul", "--gpu", "h200", "--out", out}),
        with_db({"export", "--family", "gemm", "--gpu", "h200", "--out", out}),  // none tuned
        std::vector<std::string>{"export", "--gpu", "h200", "--out", out, "--db",
                                 (directory_.path() / "missing.db").string()}}) {
    const ProcessResult result = run_swr_tune(arguments);
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_EQ(lines_of(result.err).size(), 1u) << result.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

TEST_F(RuntimeCommandsTest, ImportMergesAndRefusesABadSourceWithoutWriting) {
  TunedDatabase other(directory_.path() / "other.db");
  other.add(attention_shape(2, 2, 2048, 64), kGrid, 0.05, "2026-01-01T00:00:00.000Z");
  const std::filesystem::path target = directory_.path() / "all.db";
  ProcessResult result =
      run_swr_tune({"import", "--db", target.string(), database_.string(), other.path().string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "3 measurements, 3 added, 0 already present")) << result.out;
  EXPECT_TRUE(contains(result.out, "1 measurements, 1 added")) << result.out;

  result = run_swr_tune({"import", "--db", target.string(), other.path().string(), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out).at("sources").at(0).at("already_present"), 1);

  // A damaged export beside a good database: refused before anything is written.
  const std::filesystem::path broken = directory_.path() / "broken";
  std::filesystem::create_directories(broken);
  { std::ofstream(broken / "manifest.json") << "{\"format\": \"swr-kernel-export\"}"; }
  const std::filesystem::path fresh = directory_.path() / "fresh.db";
  result = run_swr_tune({"import", "--db", fresh.string(), database_.string(), broken.string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "schema_version is missing")) << result.err;
  EXPECT_FALSE(std::filesystem::exists(fresh));
  EXPECT_EQ(run_swr_tune({"import", "--db", fresh.string()}).exit_code, 2);
}

// The one test that compiles for real: the measured build is NVRTC's, so export finds it
// unchanged (from the cubin cache the test filled), and the export answers query and import.
TEST_F(RuntimeCommandsTest, ExportsRealCubinsThatQueryAndImportRead) {
  const std::filesystem::path cache = directory_.path() / "cubins";
  std::unique_ptr<CubinBuilder> builder;
  try {
    builder = make_nvrtc_cubin_builder(cache);
  } catch (const std::runtime_error& error) {
    GTEST_SKIP() << error.what();
  }
  const AttentionProblem shape = attention_shape(2, 4, 1024, 64);
  const char* config = "m64n64w4s1-cyclic-dynamic-head_major";
  const BuiltCubin built = builder->build(shape, config_named(config), "sm_90a");
  TunedDatabase real(directory_.path() / "real.db");
  real.add(shape, config, 0.02, "", built.source_hash);

  const std::filesystem::path out = directory_.path() / "real-export";
  ProcessResult result = run_swr_tune({"export", "--gpu", "h200", "--db", real.path().string(),
                                       "--out", out.string(), "--cache-dir", cache.string()});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(contains(result.out,
                       "exported 1 shapes (1 attention, 0 attention-backward, 0 GEMM; 1 cubins, 1 "
                       "from the cubin cache)"))
      << result.out;
  const nlohmann::json manifest = nlohmann::json::parse(std::ifstream(out / "manifest.json"));
  const nlohmann::json& kernel = manifest.at("kernels").at(0);
  EXPECT_EQ(kernel.at("compiled_source_hash"), built.source_hash);
  EXPECT_EQ(kernel.at("cubin").at("bytes"), built.cubin.size());
  EXPECT_EQ(kernel.at("arch"), "sm_90a");
  EXPECT_EQ(kernel.at("grid").at("rule"), "dynamic");

  result = run_swr_tune({"query", "--gpu", "h200", "--seq", "1500", "--batch", "2", "--heads", "4",
                         "--export", out.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, ": nearest (tuned shape " + shape.key())) << result.out;

  const std::filesystem::path merged = directory_.path() / "merged.db";
  result = run_swr_tune({"import", "--db", merged.string(), out.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "(export): 1 measurements, 1 added")) << result.out;
}

TEST_F(RuntimeCommandsTest, TheExampleLooksUpWithoutADevice) {
  if (example_path().empty()) GTEST_SKIP() << "SWR_BUILD_EXAMPLES is off";
  if (device_present()) GTEST_SKIP() << "a device is present: the GPU tests run the example";
  ProcessResult result = run_example({"--db", database_.string(), "--gpu", "h200", "--seq", "65536",
                                      "--head-dim", "128", "--batch", "8", "--heads", "1"});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(contains(result.out, "lookup: nearest, variant " + std::string(kStatic)))
      << result.out;
  EXPECT_TRUE(contains(result.out, "launch: skipped")) << result.out;
  result = run_example({"--db", database_.string(), "--gpu", "h200", "--require-gpu"});
  EXPECT_EQ(result.exit_code, 1) << result.out;
}

TEST_F(RuntimeCommandsTest, TheExampleRefusesBadArguments) {
  if (example_path().empty()) GTEST_SKIP() << "SWR_BUILD_EXAMPLES is off";
  EXPECT_EQ(run_example({}).exit_code, 2);
  EXPECT_EQ(run_example({"--db", database_.string(), "--seq", "-4"}).exit_code, 2);
  EXPECT_EQ(run_example({"--db", database_.string(), "--head-dim", "48"}).exit_code, 2);
  EXPECT_EQ(run_example({"--db", (directory_.path() / "missing.db").string()}).exit_code, 2);
  EXPECT_EQ(run_example({"--bogus"}).exit_code, 2);
}

TEST(ExamplePrograms, TakeHelp) {
  if (example_path().empty()) GTEST_SKIP() << "SWR_BUILD_EXAMPLES is off";
  for (const auto& run : {run_example, run_gemm_example}) {
    for (const std::string help : {"--help", "-h"}) {
      const ProcessResult result = run({help}, {});
      EXPECT_EQ(result.exit_code, 0) << help << ": " << result.err;
      EXPECT_NE(result.out.find("usage: swr_"), std::string::npos) << result.out;
      EXPECT_NE(result.out.find("--export DIR"), std::string::npos) << result.out;
      EXPECT_NE(result.out.find("--require-gpu"), std::string::npos) << result.out;
      EXPECT_TRUE(result.err.empty()) << result.err;
    }
  }
}

}  // namespace
}  // namespace swr::test
