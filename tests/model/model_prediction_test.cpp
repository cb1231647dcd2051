// Predictions per variant, the roofline, the twin table and the JSON, and bad profiles.
#include "model/model_prediction.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "generator/attention_space.hpp"
#include "model/model_profile.hpp"
#include "model/prediction_report.hpp"
#include "model_test_support.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

using testing::attention_config;
using testing::attention_problem;

TEST(RooflineEstimate, SlowerOfComputeAndMemory) {
  const GpuProfile gb10 = testing::builtin("gb10");
  const RooflineEstimate memory = roofline_estimate(125e12, 273e9 * 2, gb10);
  EXPECT_DOUBLE_EQ(memory.seconds, 2.0);
  EXPECT_EQ(memory.bound, "memory");
  EXPECT_DOUBLE_EQ(memory.tflops, 62.5);
  const RooflineEstimate compute = roofline_estimate(125e12 * 3, 273e9, gb10);
  EXPECT_DOUBLE_EQ(compute.seconds, 3.0);
  EXPECT_EQ(compute.bound, "compute");
  GpuProfile unknown_peak = gb10;
  unknown_peak.peak_tensor_flops = 0;
  EXPECT_EQ(roofline_estimate(1e15, 273e9, unknown_peak).bound, "memory");
}

TEST(PredictVariant, TimeFollowsPredictedDramBytes) {
  const GpuProfile gb10 = testing::builtin("gb10");
  const AttentionProblem problem = attention_problem(8, 1, 131072, 64, false);
  const ModelPrediction cyclic = predict_variant(
      problem, gb10, attention_config(64, 64, 4, KvOrder::cyclic, Persistence::static_loop));
  const ModelPrediction sawtooth = predict_variant(
      problem, gb10, attention_config(64, 64, 4, KvOrder::sawtooth, Persistence::static_loop));
  EXPECT_TRUE(cyclic.runnable);
  EXPECT_EQ(cyclic.config_key, "m64n64w4s2-cyclic-static-head_major");
  EXPECT_EQ(cyclic.requested_sectors, sawtooth.requested_sectors);
  EXPECT_LT(sawtooth.misses, cyclic.misses);
  EXPECT_LT(sawtooth.dram_bytes(), cyclic.dram_bytes());
  for (const ModelPrediction* prediction : {&cyclic, &sawtooth}) {
    const double expected_seconds =
        std::max(problem.flops() / gb10.peak_tensor_flops,
                 static_cast<double>(prediction->dram_bytes()) / gb10.dram_bytes_per_second);
    EXPECT_DOUBLE_EQ(prediction->predicted_seconds, expected_seconds);
  }
  // 3.5e13 FLOPs at 125 TFLOP/s take 0.28 s, cyclic's 6 GB of DRAM traffic 23 ms: by the roofline
  // both are compute-bound and equally fast.
  EXPECT_EQ(cyclic.bound, "compute");
  EXPECT_DOUBLE_EQ(sawtooth.predicted_seconds, cyclic.predicted_seconds);
  // Where DRAM is the bottleneck (a GB10 with 1 GB/s of DRAM), fewer misses are faster.
  GpuProfile slow_tensor = gb10;
  slow_tensor.dram_bytes_per_second = 1e9;
  const ModelPrediction slow_cyclic = predict_variant(
      problem, slow_tensor, attention_config(64, 64, 4, KvOrder::cyclic, Persistence::static_loop));
  const ModelPrediction slow_sawtooth =
      predict_variant(problem, slow_tensor,
                      attention_config(64, 64, 4, KvOrder::sawtooth, Persistence::static_loop));
  EXPECT_EQ(slow_cyclic.bound, "memory");
  EXPECT_LT(slow_sawtooth.predicted_seconds, slow_cyclic.predicted_seconds);
  EXPECT_GT(slow_sawtooth.predicted_tflops, slow_cyclic.predicted_tflops);
  EXPECT_EQ(cyclic.wave_size, 96);  // 48 SMs x 2 CTAs of 40 KiB shared memory
}

// GQA through the time model: the simulator's DRAM bytes of a multi-query problem (one K/V head of
// 8 MiB for 8 query heads) are fewer than the multi-head one's (8 K/V heads, 64 MiB), the compute
// the same, so the time model ranks it no slower; and a head dim
// never calibrated (D = 256) is predicted from D = 128, said in its rule.
TEST(PredictSpace, TimeModelUsesTheSimulatorsGqaTraffic) {
  const TimeModel* model = embedded_time_model();
  ASSERT_NE(model, nullptr) << "no time calibration embedded";
  const GpuProfile h100 = testing::builtin("h100");
  const std::vector<AttentionConfig> configs = {
      *AttentionConfig::from_key("m128n64w4s2-cyclic-grid-head_major"),
      *AttentionConfig::from_key("wgmma-m128n128s2-cyclic-grid-head_major")};
  const AttentionProblem mha = attention_problem(1, 8, 16384, 128, false);
  AttentionProblem mqa = mha;
  mqa.kv_heads = 1;
  std::vector<ModelPrediction> a = predict_space(mha, h100, configs, {}, 2);
  std::vector<ModelPrediction> b = predict_space(mqa, h100, configs, {}, 2);
  apply_time_model(a, mha, h100, model);
  apply_time_model(b, mqa, h100, model);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    ASSERT_TRUE(a[i].runnable && b[i].runnable) << a[i].note << b[i].note;
    EXPECT_EQ(a[i].requested_sectors, b[i].requested_sectors) << configs[i].key();
    // At least the 7 K/V heads MQA does not have (8 MiB each) fewer bytes from DRAM.
    EXPECT_LE(static_cast<double>(b[i].dram_bytes()),
              static_cast<double>(a[i].dram_bytes()) - 7 * mha.kv_bytes_per_head())
        << configs[i].key();
    EXPECT_NE(b[i].time_rule, "none");
    EXPECT_DOUBLE_EQ(b[i].compute_seconds, a[i].compute_seconds) << configs[i].key();
    EXPECT_LT(b[i].memory_seconds, a[i].memory_seconds) << configs[i].key();
    EXPECT_LE(b[i].predicted_seconds, a[i].predicted_seconds) << configs[i].key();
  }
  AttentionProblem d256 = mqa;
  d256.head_dim = 256;
  const std::vector<AttentionConfig> wide = {
      *AttentionConfig::from_key("m64n32w4s2-cyclic-grid-head_major")};
  std::vector<ModelPrediction> c = predict_space(d256, h100, wide, {}, 2);
  apply_time_model(c, d256, h100, model);
  ASSERT_TRUE(c[0].runnable) << c[0].note;
  EXPECT_NE(c[0].time_rule.find(" D128"), std::string::npos) << c[0].time_rule;
  EXPECT_NE(c[0].calibrated_on.find("_d128_"), std::string::npos) << c[0].calibrated_on;
  EXPECT_GT(c[0].predicted_seconds, 0);
}

TEST(PredictSpace, WholeSpaceWithTwinsSideBySide) {
  const GpuProfile gb10 = testing::builtin("gb10");
  const AttentionProblem problem = attention_problem(8, 1, 16384, 64, false);
  const AttentionSpace space = build_attention_space(problem, gb10);
  std::vector<AttentionConfig> configs = space.configs;
  AttentionConfig too_big = attention_config(128, 128, 8, KvOrder::cyclic, Persistence::grid);
  too_big.stages = 3;  // 160 KiB of shared memory: does not fit GB10's 99 KiB
  configs.push_back(too_big);
  const std::vector<ModelPrediction> predictions = predict_space(problem, gb10, configs);
  ASSERT_EQ(predictions.size(), configs.size());
  for (std::size_t i = 0; i + 1 < configs.size(); ++i) {
    EXPECT_TRUE(predictions[i].runnable) << predictions[i].note;
    EXPECT_EQ(predictions[i].config, configs[i]);
  }
  EXPECT_FALSE(predictions.back().runnable);
  EXPECT_NE(predictions.back().note.find("shared memory"), std::string::npos)
      << predictions.back().note;

  // Variants that differ only in stages with the same CTAs per SM share one simulation and agree
  // with a simulation of their own.
  const ModelPrediction alone = predict_variant(problem, gb10, configs[1]);
  EXPECT_EQ(alone.misses, predictions[1].misses);

  const std::vector<TwinPredictions> twins = pair_twins(predictions);
  ASSERT_FALSE(twins.empty());
  for (const TwinPredictions& twin : twins) {
    ASSERT_NE(twin.cyclic, nullptr) << twin.variant;
    ASSERT_NE(twin.sawtooth, nullptr) << twin.variant;
    EXPECT_EQ(twin.variant.find("cyclic"), std::string::npos);
  }
  for (std::size_t i = 1; i < twins.size(); ++i) {
    EXPECT_LE(twins[i - 1].best_seconds(), twins[i].best_seconds());
  }

  const std::string table = format_prediction_table(problem, gb10, predictions);
  EXPECT_NE(table.find("cyclic misses"), std::string::npos);
  EXPECT_NE(table.find("sawtooth misses"), std::string::npos);
  EXPECT_NE(table.find(twins.front().variant), std::string::npos);
  EXPECT_NE(table.find("not run: " + too_big.key()), std::string::npos) << table;

  const nlohmann::json json =
      nlohmann::json::parse(prediction_report_json(problem, gb10, predictions).dump());
  EXPECT_EQ(json.at("kind"), "prediction");
  EXPECT_EQ(json.at("gpu"), "gb10");
  EXPECT_EQ(json.at("problem"), problem.key());
  EXPECT_EQ(json.at("predictions").size(), configs.size());
  EXPECT_EQ(json.at("twins").size(), twins.size());
  const nlohmann::json& first = json.at("predictions").at(0);
  EXPECT_EQ(first.at("config"), configs[0].key());
  EXPECT_EQ(AttentionConfig::from_json(first.at("config_json")), configs[0]);
  EXPECT_EQ(first.at("misses").get<std::int64_t>(), predictions[0].misses);
  EXPECT_FALSE(first.at("sampled").get<bool>());
  EXPECT_FALSE(json.at("predictions").back().at("runnable").get<bool>());
}

TEST(PredictSpace, WgmmaVariantsReplayTheSameSchedule) {
  // A wgmma variant walks the tiles the mma_sync one with the same tile, wave and schedule walks:
  // the model sees the same misses; ov/pp/evl are invisible to it (and so is EVICT_LAST's effect).
  // D=128: the mma_sync tile needs 160 KiB, so it too runs one CTA per SM (the same wave).
  const GpuProfile h200 = testing::builtin("h200");
  const AttentionProblem problem = attention_problem(8, 1, 16384, 128, false);
  std::vector<AttentionConfig> configs;
  for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
    AttentionConfig mma = attention_config(128, 128, 8, order, Persistence::grid);
    AttentionConfig wgmma = mma;
    wgmma.path = InstructionPath::wgmma;
    wgmma.warps = AttentionConfig::wgmma_warps(128);
    wgmma.overlap = wgmma.pingpong = true;
    wgmma.kv_cache_hint = KvCacheHint::evict_last;
    configs.push_back(mma);
    configs.push_back(wgmma);
  }
  const std::vector<ModelPrediction> predictions = predict_space(problem, h200, configs, {}, 2);
  ASSERT_EQ(predictions.size(), 4u);
  for (const ModelPrediction& prediction : predictions) {
    ASSERT_TRUE(prediction.runnable) << prediction.note;
    EXPECT_EQ(prediction.wave_size, h200.sm_count) << prediction.config_key;  // one CTA per SM
  }
  EXPECT_EQ(predictions[1].misses, predictions[0].misses);
  EXPECT_EQ(predictions[3].misses, predictions[2].misses);
  EXPECT_EQ(pair_twins(predictions).size(), 2u);  // wgmma twins pair with each other
}

TEST(PredictSpace, PrefersTheTwinWithFewerMissesWhenTimesTie) {
  const GpuProfile gb10 = testing::builtin("gb10");
  const AttentionProblem problem = attention_problem(8, 1, 131072, 64, false);
  const std::vector<AttentionConfig> configs = {
      attention_config(64, 64, 4, KvOrder::cyclic, Persistence::static_loop),
      attention_config(64, 64, 4, KvOrder::sawtooth, Persistence::static_loop)};
  const std::vector<ModelPrediction> predictions = predict_space(problem, gb10, configs, {}, 2);
  const std::vector<TwinPredictions> twins = pair_twins(predictions);
  ASSERT_EQ(twins.size(), 1u);
  EXPECT_GE(twins[0].miss_reduction(), 0.5);
  EXPECT_EQ(twins[0].best(), &predictions[1]);  // compute-bound: equal times, fewer misses
}

GpuProfile with(const std::function<void(GpuProfile&)>& change) {
  GpuProfile gpu = testing::builtin("h200");
  change(gpu);
  return gpu;
}

TEST(ModelProfile, RefusesAbsurdProfilesNamingTheValue) {
  const AttentionProblem problem = attention_problem(1, 1, 4096, 64, false);
  const AttentionConfig config = attention_config(64, 64, 4, KvOrder::cyclic, Persistence::grid);
  const std::pair<GpuProfile, const char*> cases[] = {
      {with([](GpuProfile& g) { g.l2_bytes = 0; }), "l2_bytes 0"},
      {with([](GpuProfile& g) { g.l2_bytes = 2LL << 30; }), "l2_bytes 2147483648"},
      {with([](GpuProfile& g) { g.sm_count = 0; }), "sm_count 0"},
      {with([](GpuProfile& g) { g.sm_count = 5000; }), "sm_count 5000"},
      {with([](GpuProfile& g) { g.l2_sector_bytes = 48; }), "l2_sector_bytes 48"},
      {with([](GpuProfile& g) { g.l2_partitions = 0; }), "l2_partitions 0"},
      {with([](GpuProfile& g) { g.l2_shared_miss_factor = 0.5; }), "l2_shared_miss_factor"},
      {with([](GpuProfile& g) { g.dram_bytes_per_second = 0; }), "dram_bytes_per_second"},
      {with([](GpuProfile& g) {
         g.dram_bytes_per_second = std::numeric_limits<double>::quiet_NaN();
       }),
       "dram_bytes_per_second"},
      {with([](GpuProfile& g) { g.peak_tensor_flops = -1; }), "peak_tensor_flops"},
      {with([](GpuProfile& g) { g.max_blocks_per_sm = 0; }), "max_blocks_per_sm 0"},
  };
  for (const auto& [gpu, named] : cases) {
    try {
      simulate_l2(problem, config, gpu);
      ADD_FAILURE() << "accepted a profile with " << named;
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find(named), std::string::npos) << error.what();
    }
    EXPECT_THROW(predict_space(problem, gpu, {config}), UsageError) << named;
  }
  for (const GpuProfile& gpu : builtin_gpu_profiles()) EXPECT_NO_THROW(validate_model_profile(gpu));
  EXPECT_EQ(usable_l2_bytes(testing::builtin("h200")), 30LL * 1024 * 1024);
  EXPECT_EQ(usable_l2_bytes(testing::builtin("gb10")), 24LL * 1024 * 1024);
}

TEST(ModelBudget, RefusesReplaysOverTheMemoryOrAccessBudget) {
  const GpuProfile gb10 = testing::builtin("gb10");
  const AttentionProblem problem = attention_problem(8, 1, 131072, 64, false);
  const AttentionConfig config =
      attention_config(64, 64, 4, KvOrder::cyclic, Persistence::static_loop);
  SimulationOptions tiny_memory;
  tiny_memory.max_memory_bytes = 1024 * 1024;
  EXPECT_THROW(simulate_l2(problem, config, gb10, tiny_memory), UsageError);
  SimulationOptions sector;
  sector.granularity = CacheGranularity::sector;
  try {
    simulate_l2(problem, config, gb10, sector);
    ADD_FAILURE() << "accepted a sector replay of 1.7e10 accesses";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("17188257792"), std::string::npos) << error.what();
  }
  // In a space, an over-budget variant is reported, not thrown.
  const std::vector<ModelPrediction> predictions =
      predict_space(problem, gb10, {config}, tiny_memory);
  EXPECT_FALSE(predictions[0].runnable);
  EXPECT_NE(predictions[0].note.find("budget"), std::string::npos) << predictions[0].note;
}

TEST(ModelBudget, RefusesAVariantThatDoesNotFit) {
  AttentionConfig config = attention_config(128, 128, 8, KvOrder::cyclic, Persistence::grid);
  config.stages = 3;
  EXPECT_THROW(
      simulate_l2(attention_problem(1, 1, 4096, 64, false), config, testing::builtin("gb10")),
      UsageError);
}

}  // namespace
}  // namespace swr::model
