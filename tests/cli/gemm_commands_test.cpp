// The GEMM family on the commands that take a problem besides tune, show and query: `space`,
// `compile` (with real NVRTC compilation for sm_90a into a test-only cache, and --out) and
// `model`, as a user runs them, and their bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "generator/gemm_space.hpp"
#include "generator/gemm_swizzle.hpp"
#include "generator/resource_model.hpp"
#include "run_swr_tune.hpp"
#include "swr/gpu_profile.hpp"
#include "usage_error_output.hpp"

namespace swr::test {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const GemmProblem kSquare4096{4096, 4096, 4096, DataType::f16};
// One tile binary under two swizzles: two variants, one cubin.
const std::string kPlainOrder = "m128n256k64w2x4s3-grid-swz0";
const std::string kSwizzled = "m128n256k64w2x4s3-grid-swzn1792";

TEST(GemmSpaceCommand, ListsThePrunedSpaceWithResources) {
  const GpuProfile h200 = *find_gpu_profile("h200");
  const GemmSpace expected = build_gemm_space(kSquare4096, h200);
  ASSERT_FALSE(expected.configs.empty());

  const ProcessResult table =
      run_swr_tune({"space", "--family", "gemm", "--gpu", "h200", "--size", "4096"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("est. CTAs/SM"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(std::to_string(expected.configs.size()) + " variants of " +
                           kSquare4096.key() + " for h200 (sm_90a"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find(expected.configs.front().key()), std::string::npos);
  if (!expected.pruned.empty()) {
    EXPECT_NE(table.out.find(std::to_string(expected.pruned.size()) + " pruned:"),
              std::string::npos);
  }

  const ProcessResult json =
      run_swr_tune({"space", "--family", "gemm", "--gpu", "h200", "--size", "4096", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json output = nlohmann::json::parse(json.out);
  EXPECT_EQ(output.at("family"), "gemm");
  EXPECT_EQ(output.at("problem").at("key"), kSquare4096.key());
  EXPECT_EQ(output.at("gpu").at("arch"), "sm_90a");
  ASSERT_EQ(output.at("configs").size(), expected.configs.size());
  EXPECT_EQ(output.at("pruned").size(), expected.pruned.size());
  for (std::size_t i = 0; i < expected.configs.size(); ++i) {
    const GemmConfig& config = expected.configs[i];
    const auto& listed = output.at("configs")[i];
    EXPECT_EQ(listed.at("key"), config.key());
    const ResourceUse use = gemm_resource_use(config, h200);
    EXPECT_EQ(listed.at("resources").at("threads_per_block"), config.threads());
    EXPECT_EQ(listed.at("resources").at("dynamic_shared_bytes"), use.dynamic_shared_bytes);
    EXPECT_EQ(listed.at("resources").at("blocks_per_sm"), use.blocks_per_sm);
    EXPECT_EQ(listed.at("resources").at("limited_by"), use.limited_by);
  }
  for (const auto& dropped : output.at("pruned")) {
    EXPECT_FALSE(dropped.at("reason").get<std::string>().empty()) << dropped;
  }
}

TEST(GemmSpaceCommand, ConfigKeysRestrictTheList) {
  const ProcessResult result =
      run_swr_tune({"space", "--family", "gemm", "--gpu", "h200", "--m", "8192", "--n", "4096",
                    "--k", "1024", "--dtype", "bf16", "--config", kSwizzled, "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json output = nlohmann::json::parse(result.out);
  ASSERT_EQ(output.at("configs").size(), 1u);
  EXPECT_EQ(output.at("configs")[0].at("key"), kSwizzled);
  EXPECT_EQ(output.at("problem").at("dtype"), "bf16");
}

class GemmCompileCommand : public ::testing::Test {
 protected:
  TemporaryDirectory scratch_;
  std::filesystem::path cache_ = scratch_.path() / "cache";
  std::map<std::string, std::string> environment_ = {{"SWR_CACHE_DIR", cache_.string()}};
};

TEST_F(GemmCompileCommand, OneCubinPerTileBinaryWithTheSwizzleAsLaunchArgument) {
  const auto out = scratch_.path() / "gemm-kernels";
  const std::vector<std::string> arguments = {
      "compile",   "--family", "gemm",    "--gpu",  "h200", "--size", "4096",      "--config",
      kPlainOrder, "--config", kSwizzled, "--jobs", "2",    "--out",  out.string()};
  const ProcessResult first = run_swr_tune(arguments, environment_);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("[1/1] "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find(" ok "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("compiled 1 kernel binaries (2 variants) of " + kSquare4096.key() +
                           " for h200 (sm_90a)"),
            std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find("1 ok, 0 failed (0 from cache)"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("wrote 1 cubins and kernels.json to " + out.string()), std::string::npos)
      << first.out;

  const nlohmann::json manifest = nlohmann::json::parse(read_file(out / "kernels.json"));
  EXPECT_EQ(manifest.at("family"), "gemm");
  EXPECT_EQ(manifest.at("gpu"), "h200");
  EXPECT_EQ(manifest.at("arch"), "sm_90a");
  EXPECT_EQ(manifest.at("entry"), "swr_gemm");
  EXPECT_EQ(manifest.at("problem").at("m"), 4096);
  EXPECT_EQ(manifest.at("failed"), nlohmann::json::array());
  ASSERT_EQ(manifest.at("kernels").size(), 1u);
  const auto& kernel = manifest.at("kernels")[0];
  const GemmConfig plain = *GemmConfig::from_key(kPlainOrder);
  const GemmConfig swizzled = *GemmConfig::from_key(kSwizzled);
  EXPECT_EQ(kernel.at("threads"), plain.threads());
  EXPECT_EQ(kernel.at("dynamic_shared_bytes"), gemm_dynamic_shared_bytes(plain));
  EXPECT_GT(kernel.at("registers").get<int>(), 0);
  EXPECT_EQ(kernel.at("grid"), "grid");
  EXPECT_EQ(kernel.at("tiles"), gemm_tile_grid(kSquare4096, plain).tiles());
  const std::string cubin = read_file(out / kernel.at("file").get<std::string>());
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
  ASSERT_EQ(kernel.at("variants").size(), 2u);
  const GemmConfig variants[] = {plain, swizzled};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& variant = kernel.at("variants")[i];
    EXPECT_EQ(variant.at("key"), variants[i].key());
    EXPECT_EQ(variant.at("swizzle_axis"), swizzle_launch(variants[i]).axis);
    EXPECT_EQ(variant.at("swizzle_group"), swizzle_launch(variants[i]).group);
  }
  EXPECT_EQ(kernel.at("variants")[0].at("swizzle_group"), 0);
  EXPECT_EQ(kernel.at("variants")[1].at("swizzle_group"), 1792 / 256);
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(out)) ++files;
  EXPECT_EQ(files, 2);  // the cubin and the manifest, no temporary left

  // Again, as JSON: the binary comes from the cache.
  std::vector<std::string> json_arguments(arguments.begin(), arguments.end() - 2);
  json_arguments.push_back("--json");
  const ProcessResult second = run_swr_tune(json_arguments, environment_);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const nlohmann::json output = nlohmann::json::parse(second.out);
  EXPECT_EQ(output.at("family"), "gemm");
  EXPECT_EQ(output.at("ok"), 1);
  EXPECT_EQ(output.at("failed"), 0);
  ASSERT_EQ(output.at("results").size(), 1u);
  EXPECT_EQ(output.at("results")[0].at("cached"), true);
  EXPECT_EQ(output.at("results")[0].at("variants"),
            nlohmann::json::array({kPlainOrder, kSwizzled}));
}

// One binary at two strides on the GPU that is not here: the plain order moves more data through
// the GB10's small L2 than a band of 1024 columns, and the ranking says so.
TEST(GemmModelCommand, PredictsTrafficAndTimePerStride) {
  const ProcessResult result =
      run_swr_tune({"model", "--family", "gemm", "--gpu", "gb10", "--size", "8192",
                    "--estimate-registers", "--config", "m128n128k32w2x4s3-static-swz0", "--config",
                    "m128n128k32w2x4s3-static-swzn1024", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json output = nlohmann::json::parse(result.out);
  EXPECT_EQ(output.at("family"), "gemm");
  ASSERT_EQ(output.at("predictions").size(), 2u);
  std::map<std::string, nlohmann::json> by_key;
  for (const auto& prediction : output.at("predictions"))
    by_key[prediction.at("config")] = prediction;
  const nlohmann::json& plain = by_key.at("m128n128k32w2x4s3-static-swz0");
  const nlohmann::json& banded = by_key.at("m128n128k32w2x4s3-static-swzn1024");
  EXPECT_GT(plain.at("misses").get<double>(), banded.at("misses").get<double>());
  EXPECT_GT(plain.at("predicted_seconds").get<double>(),
            banded.at("predicted_seconds").get<double>());
  // Fastest first.
  EXPECT_EQ(output.at("predictions")[0].at("config"), "m128n128k32w2x4s3-static-swzn1024");

  const ProcessResult table =
      run_swr_tune({"model", "--family", "gemm", "--gpu", "gb10", "--size", "8192",
                    "--estimate-registers", "--config", "m128n128k32w2x4s3-static-swz0", "--config",
                    "m128n128k32w2x4s3-static-swzn1024"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const char* said :
       {"predictions, not measurements", "PREDICTIONS", "m128n128k32w2x4s3-static-swz0: n1024"}) {
    EXPECT_NE(table.out.find(said), std::string::npos) << said << "\n" << table.out;
  }
}

TEST(GemmCommandsHelp, EveryProblemCommandTakesBothFamilies) {
  for (const char* command : {"space", "compile", "model", "tune"}) {
    SCOPED_TRACE(command);
    const ProcessResult help = run_swr_tune({command, "--help"});
    EXPECT_EQ(help.exit_code, 0) << help.err;
    for (const char* option : {"--family", "--m", "--n", "--k", "--size", "--seq", "--config"}) {
      EXPECT_NE(help.out.find(option), std::string::npos) << option;
    }
  }
  // show and query filter or look up by the same problem options; export takes --family alone
  // (it exports every tuned shape of the families asked for).
  for (const char* command : {"show", "query"}) {
    SCOPED_TRACE(command);
    const ProcessResult help = run_swr_tune({command, "--help"});
    EXPECT_EQ(help.exit_code, 0) << help.err;
    for (const char* option : {"--family", "--m", "--n", "--k", "--size", "--seq", "--dtype"}) {
      EXPECT_NE(help.out.find(option), std::string::npos) << option;
    }
  }
  EXPECT_NE(run_swr_tune({"export", "--help"}).out.find("--family"), std::string::npos);
  EXPECT_NE(run_swr_tune({"space", "--help"}).out.find("swr-tune space --family gemm"),
            std::string::npos);
  EXPECT_NE(run_swr_tune({"compile", "--help"}).out.find("swr-tune compile --family gemm"),
            std::string::npos);
}

// Bad GEMM input to space, compile and model: one line, exit 2, nothing written.
TEST(GemmCommandsBadInput, OneLineAndNothingWritten) {
  struct Case {
    std::vector<std::string> arguments;  // after the command
    std::vector<std::string> said;       // each must be in the message
  };
  const std::vector<Case> cases = {
      {{"--family", "matmul", "--gpu", "h200", "--size", "1024"},
       {"'matmul'", "allowed attention, attention-backward, gemm"}},
      {{"--family", "gemm", "--gpu", "a100", "--size", "1024"}, {"'a100'", "allowed"}},
      {{"--family", "gemm", "--size", "1024"}, {"missing --gpu", "allowed"}},
      {{"--family", "gemm", "--gpu", "h200", "--size", "0"}, {"'0'", "allowed a positive integer"}},
      {{"--family", "gemm", "--gpu", "h200", "--m", "64", "--n", "1001", "--k", "64"},
       {"n 1001", "multiple of 8"}},
      {{"--family", "gemm", "--gpu", "h200", "--m", "64", "--n", "64"},
       {"missing GEMM size", "allowed --m M"}},
      {{"--family", "gemm", "--gpu", "h200", "--size", "64", "--m", "64"},
       {"--size and --m/--n/--k", "allowed"}},
      {{"--family", "gemm", "--gpu", "h200", "--size", "64", "--dtype", "f32"},
       {"'f32'", "allowed f16, bf16"}},
      {{"--family", "gemm", "--gpu", "h200", "--size", "64", "--seq", "1024"},
       {"--seq belongs to the attention family", "allowed with --family gemm are --gpu"}},
      {{"--family", "gemm", "--gpu", "h200", "--size", "64", "--head-dim", "128"},
       {"--head-dim belongs to the attention family"}},
      {{"--family", "gemm", "--gpu", "h200", "--size", "64", "--config", "not-a-key"},
       {"'not-a-key'", "allowed a GEMM config key"}},
      {{"--gpu", "h200", "--seq", "1024", "--size", "64"},
       {"--size", "belong to the GEMM family", "allowed with --family gemm"}},
  };
  for (const std::string command : {"space", "compile", "model"}) {
    for (const Case& bad : cases) {
      SCOPED_TRACE(command + ": " + bad.said.front());
      TemporaryDirectory scratch;
      const auto cache = scratch.path() / "cache";
      const auto out = scratch.path() / "out";
      std::vector<std::string> arguments = {command};
      arguments.insert(arguments.end(), bad.arguments.begin(), bad.arguments.end());
      if (command == "compile") {
        arguments.insert(arguments.end(), {"--cache-dir", cache.string(), "--out", out.string()});
      }
      const ProcessResult result = run_swr_tune(arguments, {{"SWR_CACHE_DIR", cache.string()}});
      ASSERT_NO_FATAL_FAILURE(expect_one_line_usage_error(result, bad.said));
      EXPECT_FALSE(std::filesystem::exists(cache));
      EXPECT_FALSE(std::filesystem::exists(out));
    }
  }
}

// Compile options are checked for GEMM as for attention, before anything is written.
TEST(GemmCommandsBadInput, CompileOptionsBeforeWriting) {
  TemporaryDirectory scratch;
  const auto cache = scratch.path() / "cache";
  const auto out = scratch.path() / "out";
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--jobs", "0"}, {"--limit=-1"}}) {
    std::vector<std::string> arguments = {"compile", "--family", "gemm", "--gpu",
                                          "h200",    "--size",   "1024"};
    arguments.insert(arguments.end(), options.begin(), options.end());
    arguments.insert(arguments.end(), {"--cache-dir", cache.string(), "--out", out.string()});
    const ProcessResult result = run_swr_tune(arguments);
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("allowed a positive integer"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(cache));
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

}  // namespace
}  // namespace swr::test
