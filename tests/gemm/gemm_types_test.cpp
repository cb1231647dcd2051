// GemmProblem validation (bad input is a UsageError naming the rule) and GemmConfig keys and JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "generator/gemm_space.hpp"
#include "generator/problem_json.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

void expect_usage_error(const GemmProblem& problem, const std::string& fragment) {
  try {
    problem.validate();
    ADD_FAILURE() << problem.key() << " was accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(GemmProblem, AcceptsOddMAndAlignedNK) {
  EXPECT_NO_THROW((GemmProblem{1, 8, 8, DataType::f16}.validate()));
  EXPECT_NO_THROW((GemmProblem{333, 200, 264, DataType::bf16}.validate()));
  EXPECT_NO_THROW((GemmProblem{16384, 16384, 16384, DataType::f16}.validate()));
}

TEST(GemmProblem, RejectsZeroSizes) {
  expect_usage_error({0, 64, 64, DataType::f16}, "m must be at least 1");
  expect_usage_error({64, 0, 64, DataType::f16}, "n must be at least 1");
  expect_usage_error({64, 64, 0, DataType::f16}, "k must be at least 1");
  expect_usage_error({-3, 64, 64, DataType::f16}, "m must be at least 1");
}

TEST(GemmProblem, RejectsKAndNThatNoVariantSupports) {
  expect_usage_error({64, 64, 100, DataType::f16}, "k must be a multiple of 8");
  expect_usage_error({64, 7, 64, DataType::f16}, "n must be a multiple of 8");
}

TEST(GemmProblem, RejectsMatricesBeyond32BitIndexing) {
  expect_usage_error({65536, 65536, 64, DataType::f16}, "32-bit indexing");
  expect_usage_error({64, 8, 1 << 28, DataType::f16}, "32-bit indexing");  // A: 64 x 2^28
  expect_usage_error({46341, 64, 46344, DataType::f16}, "matrix A");
}

TEST(GemmProblem, FlopsAndKey) {
  const GemmProblem problem{4096, 2048, 1024, DataType::bf16};
  EXPECT_DOUBLE_EQ(problem.flops(), 2.0 * 4096 * 2048 * 1024);
  EXPECT_EQ(problem.key(), "m4096_n2048_k1024_bf16");
  EXPECT_DOUBLE_EQ(problem.compulsory_bytes(),
                   2.0 * (4096.0 * 1024 + 1024.0 * 2048 + 4096.0 * 2048));
}

TEST(GemmConfig, KeysRoundTripForTheWholeSpace) {
  for (const GemmConfig& config : enumerate_gemm_configs()) {
    const std::optional<GemmConfig> parsed = GemmConfig::from_key(config.key());
    ASSERT_TRUE(parsed.has_value()) << config.key();
    EXPECT_EQ(*parsed, config) << config.key();
    EXPECT_EQ(GemmConfig::from_json(config.to_json()), config) << config.key();
  }
}

TEST(GemmConfig, KeySpelling) {
  GemmConfig config;
  config.block_m = 128;
  config.block_n = 256;
  config.block_k = 32;
  config.warps_m = 2;
  config.warps_n = 4;
  config.stages = 4;
  EXPECT_EQ(config.key(), "m128n256k32w2x4s4-grid-swz0");
  config.persistence = GemmPersistence::static_loop;
  config.swizzle_stride = 1792;
  EXPECT_EQ(config.key(), "m128n256k32w2x4s4-static-swzn1792");
  config.swizzle_axis = SwizzleAxis::m;
  EXPECT_EQ(config.key(), "m128n256k32w2x4s4-static-swzm1792");
}

TEST(GemmConfig, RejectsNonCanonicalKeys) {
  for (const char* key : {"", "m128n256k32w2x4s4-grid", "m128n256k32w2x4s4-grid-swz",
                          "m128n256k32w2x4s4-grid-swzn0", "m128n256k32w2x4s4-dynamic-swz0",
                          "m128n256k32w2x4-grid-swz0", "m0128n256k32w2x4s4-grid-swz0",
                          "m128n256k32w2x4s4-grid-swzq512", "m128n256k32w2x4s4-grid-swzn512x"})
    EXPECT_FALSE(GemmConfig::from_key(key).has_value()) << key;
}

TEST(GemmConfig, JsonCarriesTheReportContract) {
  GemmConfig config;
  config.swizzle_stride = 3072;
  config.swizzle_axis = SwizzleAxis::m;
  const nlohmann::json json = config.to_json();
  EXPECT_EQ(json.at("swizzle_stride"), 3072);
  EXPECT_EQ(json.at("swizzle_axis"), "m");
  EXPECT_EQ(json.at("persistence"), "grid");
  for (const char* field : {"block_m", "block_n", "block_k", "warps_m", "warps_n", "stages"})
    EXPECT_TRUE(json.contains(field)) << field;
}

TEST(GemmConfig, FromJsonNamesTheBadField) {
  nlohmann::json json = GemmConfig{}.to_json();
  json["persistence"] = "dynamic";
  EXPECT_THROW(GemmConfig::from_json(json), UsageError);
  json = GemmConfig{}.to_json();
  json.erase("swizzle_axis");
  try {
    GemmConfig::from_json(json);
    ADD_FAILURE();
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("swizzle_axis"), std::string::npos);
  }
}

GemmConfig wgmma_config() {
  GemmConfig config;
  config.path = InstructionPath::wgmma;
  config.block_m = 128;
  config.block_n = 256;
  config.block_k = 64;
  config.stages = 3;
  config.persistence = GemmPersistence::static_loop;
  return config;
}

TEST(GemmConfig, WgmmaKeySpelling) {
  GemmConfig config = wgmma_config();
  EXPECT_EQ(config.key(), "wgmma-m128n256k64s3-cooperative-c1x1-static-swz0");
  config.consumer_mode = GemmConsumerMode::pingpong;
  config.persistence = GemmPersistence::dynamic_loop;
  config.swizzle_stride = 512;
  config.swizzle_axis = SwizzleAxis::m;
  EXPECT_EQ(config.key(), "wgmma-m128n256k64s3-pingpong-c1x1-dynamic-swzm512");
  config = wgmma_config();
  config.cluster_m = 2;
  EXPECT_EQ(config.key(), "wgmma-m128n256k64s3-cooperative-c2x1-static-swz0");
  EXPECT_EQ(GemmConfig::from_key(config.key()), config);
  EXPECT_EQ(config.threads(), 384);
  config = wgmma_config();
  config.cluster_n = 2;
  config.persistence = GemmPersistence::stream_k;
  EXPECT_EQ(config.key(), "wgmma-m128n256k64s3-cooperative-c1x2-streamk-swz0");
  EXPECT_EQ(GemmConfig::from_key(config.key()), config);
  EXPECT_EQ(GemmConfig::from_json(config.to_json()), config);
  config.cluster_m = 2;
  config.persistence = GemmPersistence::static_loop;
  EXPECT_EQ(config.key(), "wgmma-m128n256k64s3-cooperative-c2x2-static-swz0");
  EXPECT_EQ(GemmConfig::from_key(config.key()), config);
  EXPECT_EQ(config.cluster_size(), 4);
  EXPECT_FALSE(GemmConfig::from_key("m128n256k32w2x4s4-streamk-swz0").has_value())
      << "mma_sync has no stream-K";
  config.block_n = 176;
  config.stages = 4;
  config.transposed = true;
  config.swizzle_stride = 1536;
  config.swizzle_axis = SwizzleAxis::m;
  EXPECT_EQ(config.key(), "wgmma-m128n176k64s4-cooperative-c2x2-transposed-static-swzm1536");
  EXPECT_EQ(GemmConfig::from_key(config.key()), config);
}

TEST(GemmConfig, RejectsNonCanonicalWgmmaKeys) {
  for (const char* key : {"wgmma-m128n256k64s3-cooperative-c1x1-grid-swz0",  // no grid mode
                          "wgmma-m128n256k64s3-coop-c1x1-static-swz0",
                          "wgmma-m128n256k64w2x4s3-cooperative-c1x1-static-swz0",
                          "wgmma-m128n256k64s3-cooperative-c1-static-swz0",
                          "wgmma-m128n256k64s3-cooperative-static-swz0",
                          "mma-m128n256k64s3-cooperative-c1x1-static-swz0",
                          "wgmma-m128n256k64s3-cooperative-c1x1-static-swzn0",
                          "wgmma-m128n256k64s3-cooperative-c1x1-transpose-static-swz0",
                          "wgmma-m128n256k64s3-cooperative-transposed-c1x1-static-swz0",
                          "wgmma-m128n256k64s3-cooperative-c1x1-static-transposed-swz0"})
    EXPECT_FALSE(GemmConfig::from_key(key).has_value()) << key;
}

TEST(GemmConfig, MmaSyncJsonHasNoPathAndStaysAsStored) {
  // The text a row stored before the wgmma path existed: it must still parse to the same config
  // and print back byte for byte.
  const std::string stored =
      R"({"block_k":32,"block_m":128,"block_n":256,"persistence":"static","stages":4,)"
      R"("swizzle_axis":"n","swizzle_stride":1792,"warps_m":2,"warps_n":4})";
  const GemmConfig config = GemmConfig::from_json(nlohmann::json::parse(stored));
  EXPECT_EQ(config.path, InstructionPath::mma_sync);
  EXPECT_EQ(config.key(), "m128n256k32w2x4s4-static-swzn1792");
  EXPECT_EQ(config.to_json().dump(), stored);
}

TEST(GemmConfig, WgmmaJsonRoundTripsAndNamesTheBadField) {
  GemmConfig config = wgmma_config();
  config.consumer_mode = GemmConsumerMode::pingpong;
  config.persistence = GemmPersistence::dynamic_loop;
  const nlohmann::json json = config.to_json();
  EXPECT_EQ(json.at("path"), "wgmma");
  EXPECT_EQ(json.at("consumer_mode"), "pingpong");
  EXPECT_EQ(json.at("cluster_m"), 1);
  EXPECT_FALSE(json.contains("warps_m")) << "warpgroups are fixed, not a knob";
  EXPECT_EQ(GemmConfig::from_json(json), config);
  EXPECT_FALSE(json.contains("transposed")) << "absent unless set: stored rows keep their text";
  GemmConfig transposed = config;
  transposed.transposed = true;
  EXPECT_EQ(transposed.to_json().at("transposed"), true);
  EXPECT_EQ(GemmConfig::from_json(transposed.to_json()), transposed);
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, nlohmann::json>>{{"consumer_mode", "both"},
                                                           {"persistence", "grid"},
                                                           {"cluster_m", 0},
                                                           {"path", "tma"},
                                                           {"transposed", "yes"}}) {
    nlohmann::json bad = json;
    bad[field] = value;
    try {
      GemmConfig::from_json(bad);
      ADD_FAILURE() << field;
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
    }
  }
}

// The one JSON form of a GEMM problem: its fields, which read back to the same problem; the keyed
// and family forms add "key" and "family" to them; a bad dtype, a size that is not an int or a
// missing field throws.
TEST(GemmProblemJson, RoundTripsAndNamesWhatIsWrong) {
  const GemmProblem problem{5000, 3072, 7168, DataType::bf16};
  const nlohmann::json json = problem.to_json();
  EXPECT_EQ(json, nlohmann::json::parse(R"({"m": 5000, "n": 3072, "k": 7168, "dtype": "bf16"})"));
  EXPECT_EQ(GemmProblem::from_json(json), problem);
  const nlohmann::json family = family_problem_json(problem);
  EXPECT_EQ(family.at("key"), "m5000_n3072_k7168_bf16");
  EXPECT_EQ(family.at("family"), "gemm");
  EXPECT_EQ(GemmProblem::from_json(family), problem);

  nlohmann::json bad = json;
  bad["dtype"] = "f32";
  EXPECT_THROW(GemmProblem::from_json(bad), std::invalid_argument);
  bad = json;
  bad.erase("k");
  EXPECT_THROW(GemmProblem::from_json(bad), nlohmann::json::exception);
  // Not get<int>()'s undefined conversion (tests/fuzz/fuzz_json_forms found it): a named error.
  for (const nlohmann::json& size :
       {nlohmann::json(4.88e115), nlohmann::json(4096.0), nlohmann::json(std::int64_t{1} << 31),
        nlohmann::json("4096")}) {
    bad = json;
    bad["n"] = size;
    EXPECT_THROW(GemmProblem::from_json(bad), std::invalid_argument) << size;
  }
}

}  // namespace
}  // namespace swr
