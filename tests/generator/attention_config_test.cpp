#include "swr/attention_config.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "generator/attention_space.hpp"
#include "swr/gpu_profile.hpp"
#include "swr/usage_error.hpp"
#include "tests/fixtures/problem_builders.hpp"

namespace swr {
namespace {

AttentionConfig example_config() {
  return fixtures::attention_config(128, 64, 8, 2, KvOrder::sawtooth, Persistence::static_loop,
                                    TileSwizzle::head_groups, 4);
}

// Every config the generator can enumerate, for a few problems on every built-in GPU.
std::vector<AttentionConfig> all_enumerated_configs() {
  std::vector<AttentionConfig> configs;
  for (const GpuProfile& gpu : builtin_gpu_profiles()) {
    for (int seq : {1000, 16384, 131072}) {
      AttentionProblem problem{.batch = 8, .heads = 16, .seq_q = seq, .seq_kv = seq};
      for (const AttentionConfig& config : enumerate_attention_configs(problem, gpu)) {
        configs.push_back(config);
      }
    }
  }
  return configs;
}

TEST(AttentionConfig, KeyOfTheDocumentedExample) {
  EXPECT_EQ(example_config().key(), "m128n64w8s2-sawtooth-static-groups4");
}

TEST(AttentionConfig, KeyNamesEveryKnob) {
  AttentionConfig config;
  EXPECT_EQ(config.key(), "m128n64w8s2-cyclic-grid-head_major");
  config.swizzle = TileSwizzle::heads_interleaved;
  config.persistence = Persistence::dynamic;
  config.stages = 3;
  EXPECT_EQ(config.key(), "m128n64w8s3-cyclic-dynamic-heads_interleaved");
  config.planted_fault = true;
  EXPECT_EQ(config.key(), "m128n64w8s3-cyclic-dynamic-heads_interleaved-fault");
}

TEST(AttentionConfig, KeyAndJsonRoundTripForEveryEnumeratedConfig) {
  const std::vector<AttentionConfig> configs = all_enumerated_configs();
  ASSERT_GT(configs.size(), 270u);
  for (const AttentionConfig& config : configs) {
    const std::optional<AttentionConfig> parsed = AttentionConfig::from_key(config.key());
    ASSERT_TRUE(parsed.has_value()) << config.key();
    EXPECT_EQ(*parsed, config) << config.key();
    const nlohmann::json json = config.to_json();
    EXPECT_EQ(AttentionConfig::from_json(json), config) << json.dump();
    EXPECT_EQ(AttentionConfig::from_json(nlohmann::json::parse(json.dump())), config);
  }
}

TEST(AttentionConfig, EnumeratedKeysAreUnique) {
  for (const GpuProfile& gpu : builtin_gpu_profiles()) {
    AttentionProblem problem{.batch = 4, .heads = 8, .seq_q = 16384, .seq_kv = 16384};
    std::set<std::string> keys;
    const auto configs = enumerate_attention_configs(problem, gpu);
    for (const AttentionConfig& config : configs) keys.insert(config.key());
    EXPECT_EQ(keys.size(), configs.size()) << gpu.name;
  }
}

TEST(AttentionConfig, PlantedFaultRoundTrips) {
  AttentionConfig config = example_config();
  config.planted_fault = true;
  EXPECT_EQ(config.key(), "m128n64w8s2-sawtooth-static-groups4-fault");
  EXPECT_EQ(AttentionConfig::from_key(config.key()), config);
  EXPECT_EQ(AttentionConfig::from_json(config.to_json()), config);
}

TEST(AttentionConfig, FromKeyRejectsAnythingButACanonicalKey) {
  const char* bad_keys[] = {
      "",
      "m128n64w8s2",
      "m128n64w8s2-sawtooth-static",
      "m128n64w8s2-sawtooth-static-groups4-",
      "m128n64w8s2-sawtooth-static-groups4-fault-fault",
      "m128n64w8s2-sawtooth-static-groups4-faulty",
      "m128n64w8s2-zigzag-static-head_major",
      "m128n64w8s2-cyclic-static_loop-head_major",
      "m128n64w8s2-cyclic-persistent-head_major",
      "m128n64w8s2-cyclic-grid-head_groups",
      "m128n64w8s2-cyclic-grid-groups",
      "m128n64w8s2-cyclic-grid-groups0",
      "m128n64w8s2-cyclic-grid-groups-3",
      "m128n64w8s2-cyclic-grid-groups04",
      "m128n64w8s2-cyclic-grid-interleaved",
      "m0128n64w8s2-cyclic-grid-head_major",
      "m0n64w8s2-cyclic-grid-head_major",
      "m128n64w8-cyclic-grid-head_major",
      "m128n64w8s2x-cyclic-grid-head_major",
      "n64m128w8s2-cyclic-grid-head_major",
      "M128N64W8S2-cyclic-grid-head_major",
      "m99999999999n64w8s2-cyclic-grid-head_major",
      "m+128n64w8s2-cyclic-grid-head_major",
      " m128n64w8s2-cyclic-grid-head_major",
      "m128n64w8s2-cyclic-grid-head_major ",
      "m128n64w8s2--cyclic-grid-head_major",
      "m128n64w8s2-Cyclic-grid-head_major",
  };
  for (const char* key : bad_keys) {
    EXPECT_FALSE(AttentionConfig::from_key(key).has_value()) << '"' << key << '"';
  }
}

TEST(AttentionConfig, JsonCarriesNamedFields) {
  const nlohmann::json json = example_config().to_json();
  EXPECT_EQ(json.at("block_m"), 128);
  EXPECT_EQ(json.at("order"), "sawtooth");
  EXPECT_EQ(json.at("persistence"), "static");
  EXPECT_EQ(json.at("swizzle"), "head_groups");
  EXPECT_EQ(json.at("head_group"), 4);
  EXPECT_EQ(json.at("key"), "m128n64w8s2-sawtooth-static-groups4");
}

void expect_usage_error(const nlohmann::json& json, const std::string& fragment) {
  try {
    (void)AttentionConfig::from_json(json);
    ADD_FAILURE() << "accepted " << json.dump();
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
        << "message \"" << error.what() << "\" lacks \"" << fragment << '"';
  }
}

AttentionConfig wgmma_example() {
  AttentionConfig config;
  config.path = InstructionPath::wgmma;
  config.block_m = 128;
  config.warps = 12;
  config.block_n = 176;
  config.stages = 2;
  config.overlap = true;
  config.pingpong = true;
  config.kv_cache_hint = KvCacheHint::evict_last;
  config.order = KvOrder::sawtooth;
  config.persistence = Persistence::static_loop;
  config.swizzle = TileSwizzle::head_groups;
  config.head_group = 8;
  return config;
}

TEST(AttentionConfig, MmaSyncJsonIsUnchangedByThePathField) {
  // Stored rows keep meaning the same kernel: no "path" and no wgmma knob for mma_sync.
  EXPECT_EQ(example_config().to_json().dump(),
            R"({"block_m":128,"block_n":64,"head_group":4,"key":"m128n64w8s2-sawtooth-static-)"
            R"(groups4","order":"sawtooth","persistence":"static","planted_fault":false,)"
            R"("stages":2,"swizzle":"head_groups","warps":8})");
  nlohmann::json with_path = example_config().to_json();
  with_path["path"] = "mma_sync";
  EXPECT_EQ(AttentionConfig::from_json(with_path), example_config());
}

TEST(AttentionConfig, WgmmaKeysHaveTheirOwnCanonicalSpelling) {
  AttentionConfig config = wgmma_example();
  EXPECT_EQ(config.key(), "wgmma-m128n176s2-ov-pp-evl-sawtooth-static-groups8");
  EXPECT_EQ(AttentionConfig::from_key(config.key()), config);
  config.overlap = config.pingpong = false;
  config.kv_cache_hint = KvCacheHint::none;
  config.block_m = 192;
  config.warps = 16;
  config.persistence = Persistence::grid;
  config.swizzle = TileSwizzle::head_major;
  config.head_group = 1;
  config.planted_fault = true;
  EXPECT_EQ(config.key(), "wgmma-m192n176s2-sawtooth-grid-head_major-fault");
  EXPECT_EQ(AttentionConfig::from_key(config.key()), config);
  config.planted_fault = false;
  config.planted_hang = true;
  config.p_in_smem = true;
  config.persistence = Persistence::dynamic;
  EXPECT_EQ(config.key(), "wgmma-m192n176s2-psm-sawtooth-dynamic-head_major-hang");
  EXPECT_EQ(AttentionConfig::from_key(config.key()), config);
  for (const char* bad :
       {"wgmma", "wgmma-m128n176s2", "wgmma-m128n176w12s2-cyclic-grid-head_major",
        "wgmma-m128n176s2-pp-ov-cyclic-grid-head_major",
        "wgmma-m128n176s2-ov-ov-cyclic-grid-head_major",
        "wgmma-m128n176s2-xx-cyclic-grid-head_major", "m128n176s2-ov-cyclic-grid-head_major",
        "wgmma-wgmma-m128n176s2-cyclic-grid-head_major",
        "wgmma-m128n176s2-psm-ov-cyclic-grid-head_major",
        "wgmma-m128n176s2-cyclic-grid-head_major-hang-fault",
        "m128n64w8s2-psm-cyclic-grid-head_major",
        "wgmma-m128n176s2-cyclic-grid-head_major-hang-hang"}) {
    EXPECT_FALSE(AttentionConfig::from_key(bad).has_value()) << bad;
  }
}

TEST(AttentionConfig, PInSmemKeepsTheOtherKeysAndReadsOldRows) {
  // The new token only appears when on: the keys of every existing variant stay as they were.
  AttentionConfig config = wgmma_example();
  const std::string before = config.key();
  config.p_in_smem = true;
  EXPECT_EQ(config.key(), "wgmma-m128n176s2-ov-pp-evl-psm-sawtooth-static-groups8");
  EXPECT_EQ(AttentionConfig::from_key(config.key()), config);
  EXPECT_EQ(config.to_json().at("p_in_smem"), true);
  EXPECT_EQ(AttentionConfig::from_json(config.to_json()), config);
  EXPECT_EQ(wgmma_example().key(), before);
  // A wgmma row stored before the knob existed has no "p_in_smem": the RS form it was.
  nlohmann::json old_row = wgmma_example().to_json();
  EXPECT_EQ(old_row.at("p_in_smem"), false);
  old_row.erase("p_in_smem");
  EXPECT_EQ(AttentionConfig::from_json(old_row), wgmma_example());
  old_row["p_in_smem"] = "yes";
  expect_usage_error(old_row, "\"p_in_smem\" must be true or false");
  // The planted hang names itself in the JSON form, and only there where it is set.
  EXPECT_FALSE(wgmma_example().to_json().contains("planted_hang"));
  AttentionConfig hang = wgmma_example();
  hang.planted_hang = true;
  EXPECT_EQ(hang.to_json().at("planted_hang"), true);
  EXPECT_EQ(AttentionConfig::from_json(hang.to_json()), hang);
}

TEST(AttentionConfig, WgmmaJsonRoundTripsAndNamesItsKnobs) {
  const nlohmann::json json = wgmma_example().to_json();
  EXPECT_EQ(json.at("path"), "wgmma");
  EXPECT_EQ(json.at("overlap"), true);
  EXPECT_EQ(json.at("pingpong"), true);
  EXPECT_EQ(json.at("kv_cache_hint"), "evict_last");
  EXPECT_EQ(AttentionConfig::from_json(json), wgmma_example());
  nlohmann::json bad = json;
  bad["path"] = "tcgen05";
  expect_usage_error(bad, "mma_sync, wgmma");
  bad = json;
  bad.erase("pingpong");
  expect_usage_error(bad, "\"pingpong\" must be true or false (got nothing)");
  bad = json;
  bad["kv_cache_hint"] = "evict_first";
  expect_usage_error(bad, "none, evict_last");
}

TEST(AttentionConfig, FromJsonRejectsMissingAndWrongFields) {
  const nlohmann::json good = example_config().to_json();
  for (const char* field :
       {"block_m", "block_n", "warps", "stages", "order", "persistence", "swizzle", "head_group"}) {
    nlohmann::json json = good;
    json.erase(field);
    json.erase("key");
    expect_usage_error(json, field);
  }
  nlohmann::json json = good;
  json["stages"] = "two";
  expect_usage_error(json, "stages");
  json = good;
  json["warps"] = 0;
  expect_usage_error(json, "warps");
  json = good;
  json["block_n"] = 64.5;
  expect_usage_error(json, "block_n");
  json = good;
  json["order"] = "zigzag";
  expect_usage_error(json, "cyclic, sawtooth");
  json = good;
  json["persistence"] = 3;
  expect_usage_error(json, "grid, static, dynamic");
  json = good;
  json["swizzle"] = "diagonal";
  expect_usage_error(json, "head_major, heads_interleaved, head_groups");
  json = good;
  json["planted_fault"] = "yes";
  expect_usage_error(json, "planted_fault");
  json = good;
  json["key"] = "m64n64w4s1-cyclic-grid-head_major";
  expect_usage_error(json, "key");
  expect_usage_error(nlohmann::json::array({1, 2}), "object");
}

TEST(AttentionConfig, HeadGroupIsOnlyReadForHeadGroups) {
  nlohmann::json json = example_config().to_json();
  json["swizzle"] = "head_major";
  json.erase("key");
  json["head_group"] = 7;
  const AttentionConfig config = AttentionConfig::from_json(json);
  EXPECT_EQ(config.head_group, 1);
  EXPECT_EQ(config.key(), "m128n64w8s2-sawtooth-static-head_major");
}

TEST(AttentionConfig, EnumTextForms) {
  for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
    EXPECT_EQ(parse_kv_order(to_string(order)), order);
  }
  for (Persistence persistence :
       {Persistence::grid, Persistence::static_loop, Persistence::dynamic}) {
    EXPECT_EQ(parse_persistence(to_string(persistence)), persistence);
  }
  for (TileSwizzle swizzle :
       {TileSwizzle::head_major, TileSwizzle::heads_interleaved, TileSwizzle::head_groups}) {
    EXPECT_EQ(parse_tile_swizzle(to_string(swizzle)), swizzle);
  }
  EXPECT_EQ(to_string(Persistence::static_loop), "static");
  EXPECT_EQ(parse_persistence("static_loop"), Persistence::static_loop);
  EXPECT_FALSE(parse_kv_order("Sawtooth").has_value());
  EXPECT_FALSE(parse_persistence("").has_value());
  EXPECT_FALSE(parse_tile_swizzle("groups").has_value());
}

}  // namespace
}  // namespace swr
