// compile and the main job, with real NVRTC compilation of real variants into a test-only cache.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "driver/cuda_driver.hpp"
#include "generator/kernel_source.hpp"
#include "run_swr_tune.hpp"

namespace swr::test {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int count_files_with_extension(const std::filesystem::path& directory,
                               const std::string& extension) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() == extension) ++count;
  }
  return count;
}

class CompileCommand : public ::testing::Test {
 protected:
  TemporaryDirectory scratch_;
  std::filesystem::path cache_ = scratch_.path() / "cache";
  // A scratch database too: the main job never touches the user's, and needs no HOME.
  std::map<std::string, std::string> environment_ = {
      {"SWR_CACHE_DIR", cache_.string()}, {"SWR_DB", (scratch_.path() / "results.db").string()}};
};

TEST_F(CompileCommand, WritesCubinsAndManifestThenHitsTheCache) {
  const auto out = scratch_.path() / "kernels";
  const std::vector<std::string> arguments = {"compile", "--gpu", "gb10",     "--seq",     "1000",
                                              "--heads", "2",     "--causal", "--limit",   "2",
                                              "--jobs",  "2",     "--out",    out.string()};
  const ProcessResult first = run_swr_tune(arguments, environment_);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;

  // One line per variant, then the summary naming the cache.
  EXPECT_NE(first.out.find("[1/2] "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("[2/2] "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find(" ok "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("2 ok, 0 failed"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find(cache_.string()), std::string::npos) << first.out;

  EXPECT_EQ(count_files_with_extension(out, ".cubin"), 2);
  const nlohmann::json manifest = nlohmann::json::parse(read_file(out / "kernels.json"));
  EXPECT_EQ(manifest.at("gpu"), "gb10");
  EXPECT_EQ(manifest.at("arch"), "sm_121");
  EXPECT_EQ(manifest.at("entry"), kAttentionEntryName);
  EXPECT_EQ(manifest.at("problem").at("seq_q"), 1000);
  EXPECT_EQ(manifest.at("problem").at("causal"), true);
  ASSERT_EQ(manifest.at("kernels").size(), 2u);
  for (const auto& kernel : manifest.at("kernels")) {
    const std::string key = kernel.at("key");
    EXPECT_EQ(kernel.at("file"), key + ".cubin");
    const std::string cubin = read_file(out / kernel.at("file").get<std::string>());
    ASSERT_GE(cubin.size(), 4u) << key;
    EXPECT_EQ(cubin.substr(0, 4),
              "\x7f"
              "ELF")
        << key;
    EXPECT_GT(kernel.at("threads").get<int>(), 0);
    EXPECT_GT(kernel.at("dynamic_shared_bytes").get<int>(), 0);
    EXPECT_GT(kernel.at("registers").get<int>(), 0);
    const std::string grid = kernel.at("grid");
    EXPECT_TRUE(grid == "grid" || grid == "static" || grid == "dynamic") << grid;
    EXPECT_TRUE(kernel.at("config").is_object());
  }
  // No temporary file is left behind.
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }

  // The same variants again come from the on-disk cache, with the same bytes.
  const std::string first_cubin =
      read_file(out / manifest.at("kernels")[0].at("file").get<std::string>());
  const ProcessResult second = run_swr_tune(arguments, environment_);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("(2 from cache)"), std::string::npos) << second.out;
  EXPECT_EQ(read_file(out / manifest.at("kernels")[0].at("file").get<std::string>()), first_cubin);
}

TEST_F(CompileCommand, JsonReportsEveryVariant) {
  const ProcessResult result = run_swr_tune(
      {"compile", "--gpu", "h200", "--seq", "512", "--dtype", "bf16", "--limit", "1", "--json"},
      environment_);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  const nlohmann::json output = nlohmann::json::parse(result.out);
  EXPECT_EQ(output.at("arch"), "sm_90a");
  EXPECT_EQ(output.at("ok"), 1);
  EXPECT_EQ(output.at("failed"), 0);
  ASSERT_EQ(output.at("results").size(), 1u);
  const auto& variant = output.at("results")[0];
  EXPECT_EQ(variant.at("ok"), true);
  EXPECT_GT(variant.at("cubin_bytes").get<int>(), 0);
  EXPECT_GT(variant.at("registers").get<int>(), 0);
  EXPECT_GE(variant.at("spill_bytes").get<int>(), 0);
}

TEST_F(CompileCommand, MainJobCompilesAndSaysTimingNeedsTheGpu) {
  const ProcessResult result =
      run_swr_tune({"--gpu", "gb10", "--seq", "1000", "--limit", "1"}, environment_);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("1 ok, 0 failed"), std::string::npos) << result.out;
  // No machine here is a GB10: either there is no driver, or the device is another GPU.
  const std::string why = CudaDriver::try_get() == nullptr
                              ? "timing needs the gb10 GPU: no CUDA driver/device found"
                              : "timing needs the gb10 GPU: the present device is ";
  EXPECT_NE(result.out.find(why), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("compiled 1 variants for sm_121; cubins cached in " + cache_.string()),
            std::string::npos)
      << result.out;
  EXPECT_TRUE(std::filesystem::exists(cache_));
}

TEST_F(CompileCommand, MainJobOnThePresentDevice) {
  if (CudaDriver::try_get() == nullptr) {
    // "auto" needs a device: without one it is a plain error, exit 1, nothing compiled.
    const ProcessResult result = run_swr_tune({"--gpu", "auto", "--seq", "1000"}, environment_);
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.err.rfind("swr-tune: error: no CUDA driver/device found", 0), 0u)
        << result.err;
    EXPECT_FALSE(std::filesystem::exists(cache_));
    return;
  }
  // With the device present the main job tunes: one variant measured into a scratch database.
  const std::string database = (scratch_.path() / "results.db").string();
  const ProcessResult result = run_swr_tune(
      {"--gpu", "auto", "--seq", "1000", "--limit", "1", "--db", database}, environment_);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("measured 1 of 1 variants"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace swr::test
