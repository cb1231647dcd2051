// The backward's L2 model (model/backward_prediction.hpp): what it counts per step and tile (the
// requested sectors by formula), misses between the compulsory ones and the requests, the sawtooth
// walk saving misses once a head's Q and dO outgrow the L2 (and little before), the replay against
// measured L2 counters, and the time rule's rate recomputed from the measured file it cites.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "model/backward_prediction.hpp"
#include "model/xz_text.hpp"

namespace swr::model {
namespace {

nlohmann::json measured_file(const std::string& relative) {
  std::ifstream file(std::string(SWR_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(file) << relative;
  return file ? nlohmann::json::parse(file)
              : nlohmann::json{{"measurements", nlohmann::json::array()}};
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// The best TFLOP/s of a measured file's rows that ran and that `keep(problem, config)` takes.
template <class Keep>
double best_tflops(const std::string& relative, Keep keep) {
  const nlohmann::json measured = measured_file(relative);
  double best = 0;
  for (const nlohmann::json& row : measured.at("measurements")) {
    const auto config = AttentionBackwardConfig::from_key(row.at("config").get<std::string>());
    EXPECT_TRUE(config) << row.dump();
    if (config && row.at("status") == "ok" && keep(row.at("problem").get<std::string>(), *config)) {
      best = std::max(best, row.at("tflops").get<double>());
    }
  }
  return best;
}

bool is_d128(const std::string& problem) {
  return problem.find("_d128_") != std::string::npos;
}

AttentionBackwardConfig tile(int block_m, int block_n, int warps, KvOrder order) {
  AttentionBackwardConfig config;
  config.block_m = block_m;
  config.block_n = block_n;
  config.warps = warps;
  config.order = order;
  return config;
}

TEST(BackwardPrediction, RequestsAreWhatEveryStepReads) {
  const GpuProfile gpu = find_gpu_profile("h200").value();
  // 2 x 4 heads over 2 K/V heads, 256 rows of D = 64 f16: 4 K/V tiles of 64, 8 Q tiles of 32.
  AttentionProblem shape{2, 4, 256, 256, 64, DataType::f16, false};
  shape.kv_heads = 2;
  const AttentionBackwardProblem problem{shape};
  const BackwardPrediction p =
      predict_backward_variant(problem, gpu, tile(32, 64, 4, KvOrder::cyclic));
  ASSERT_TRUE(p.runnable) << p.note;
  // Per step: Q and dO (32 rows x 4 sectors each), L and delta (32 x 2 x 4 B = 8 sectors), the
  // dQ rows read and written (32 x 8 sectors, twice). Steps: 2 x 2 K/V heads x 4 K/V tiles, each
  // walking 2 query heads x 8 Q tiles. Per tile: its K and V (64 rows x 4 sectors each).
  const std::int64_t per_step = 2 * 32 * 4 + 8 + 2 * 32 * 8;
  const std::int64_t units = 2 * 2 * 4;
  const std::int64_t steps = units * 2 * 8;
  EXPECT_EQ(p.requested_sectors, steps * per_step + units * 2 * 64 * 4);
  // Everything is read at least once; nothing more than it is requested.
  const std::int64_t distinct = 2 * 4 * 8 * (2 * 32 * 4 + 8 + 32 * 8) + 2 * 2 * 4 * 2 * 64 * 4;
  EXPECT_EQ(p.compulsory_misses, distinct);
  EXPECT_GE(p.misses, p.compulsory_misses);
  EXPECT_LE(p.misses, p.requested_sectors);
}

// The replay walks the kernel's split parts (backward_last_wave): every step once, as whole tiles
// do, and K and V once a part.
TEST(BackwardPrediction, TheReplayWalksTheLastWavesParts) {
  const GpuProfile gpu = find_gpu_profile("h200").value();
  // 2 heads of 1024 rows: 16 K/V tiles of 128, 13 Q tiles of 80 a walk.
  const AttentionBackwardProblem problem{{1, 2, 1024, 1024, 128, DataType::bf16, false}};
  const AttentionBackwardConfig config =
      AttentionBackwardConfig::from_key("bwd-wgmma-m80n128w12s2-cyclic-grid-head_major").value();
  ASSERT_EQ(backward_last_wave(problem, config, 16).parts, 1);  // one whole wave
  ASSERT_EQ(backward_last_wave(problem, config, 132).parts, 8);
  const BackwardPrediction whole = predict_backward_variant(problem, gpu, config, 16);
  const BackwardPrediction split = predict_backward_variant(problem, gpu, config, 132);
  ASSERT_TRUE(whole.runnable && split.runnable) << whole.note << split.note;
  const std::int64_t kv_sectors = 2 * 128 * (128 * 2 / 32);  // K and V of a tile
  EXPECT_EQ(split.requested_sectors - whole.requested_sectors, (16 * 8 - 16) * kv_sectors);
  EXPECT_EQ(split.compulsory_misses, whole.compulsory_misses);
}

TEST(BackwardPrediction, SawtoothSavesMissesOnlyWhereQAndDoOutgrowTheL2) {
  const GpuProfile gpu = find_gpu_profile("h200").value();
  for (int seq : {8192, 65536}) {
    SCOPED_TRACE(seq);
    // One head a batch: Q and dO of a head and its fp32 dQ are 8 MiB at 8192 rows (they stay in
    // the 60 MiB L2), 64 MiB at 65536 (they do not).
    const AttentionBackwardProblem problem{{8, 1, seq, seq, 128, DataType::bf16, false}};
    const BackwardPrediction cyclic =
        predict_backward_variant(problem, gpu, tile(32, 128, 8, KvOrder::cyclic));
    const BackwardPrediction sawtooth =
        predict_backward_variant(problem, gpu, tile(32, 128, 8, KvOrder::sawtooth));
    EXPECT_EQ(cyclic.requested_sectors, sawtooth.requested_sectors);
    if (seq == 8192) {
      // Nothing to save: the replay has the reversed walks of a round boundary meeting the
      // forward ones of the head they share, a few percent either way.
      EXPECT_GT(static_cast<double>(sawtooth.misses) / cyclic.misses, 0.9);
    } else {
      EXPECT_LT(static_cast<double>(sawtooth.misses) / cyclic.misses, 0.9);
    }
  }
}

TEST(BackwardPrediction, TheTimeRulesRateIsTheMeasuredOne) {
  const double best =
      best_tflops("bench/results/attention-backward-h200/tune-mma-sync.json",
                  [](const std::string& problem, const AttentionBackwardConfig& config) {
                    return is_d128(problem);
                  });
  const GpuProfile h200 = find_gpu_profile("h200").value();
  EXPECT_NEAR(kMmaSyncBackwardPeakFraction, best * 1e12 / h200.peak_tensor_flops, 0.0005);
}

TEST(BackwardPrediction, TheWgmmaRateIsTheMeasuredOne) {
  const double best =
      best_tflops("bench/results/attention-backward-wgmma-h200/tune-first.json",
                  [](const std::string& problem, const AttentionBackwardConfig& config) {
                    return config.path == InstructionPath::wgmma && !config.warp_specialized() &&
                           is_d128(problem);
                  });
  const GpuProfile h200 = find_gpu_profile("h200").value();
  EXPECT_NEAR(kWgmmaBackwardPeakFraction, best * 1e12 / h200.peak_tensor_flops, 0.0005);
  // The model ranks a wgmma variant ahead of its mma.sync peers, as measured at every shape.
  const AttentionBackwardProblem problem{{2, 16, 16384, 16384, 128, DataType::bf16, false}};
  AttentionBackwardConfig wgmma =
      AttentionBackwardConfig::from_key("bwd-wgmma-m64n128w8s2-cyclic-grid-head_major").value();
  AttentionBackwardConfig mma_sync =
      AttentionBackwardConfig::from_key("bwd-m32n128w8s2-cyclic-grid-head_major").value();
  EXPECT_LT(predict_backward_variant(problem, h200, wgmma).predicted_seconds,
            predict_backward_variant(problem, h200, mma_sync).predicted_seconds);
}

// In sample: the knobs' shares are the medians of the file the rate comes from, each variant's
// TFLOP/s over its twin's with a 128-row tile (same walk, persistence, mapping) or atomic dQ.
TEST(BackwardPrediction, TheWarpSpecializedRateIsTheMeasuredOne) {
  const double best =
      best_tflops("bench/results/attention-backward-ws-h200/full-tune.json",
                  [](const std::string& problem, const AttentionBackwardConfig& config) {
                    return config.warp_specialized();
                  });
  const GpuProfile h200 = find_gpu_profile("h200").value();
  EXPECT_NEAR(kWarpSpecializedBackwardPeakFraction, best * 1e12 / h200.peak_tensor_flops, 0.0005);
  // The model ranks the warp-specialized kernel ahead of the other wgmma kernel, as measured.
  const AttentionBackwardProblem problem{{2, 16, 16384, 16384, 128, DataType::bf16, false}};
  const auto warp_specialized =
      AttentionBackwardConfig::from_key("bwd-wgmma-m64n128w12s2-cyclic-grid-head_major").value();
  const auto plain =
      AttentionBackwardConfig::from_key("bwd-wgmma-m64n128w8s2-cyclic-grid-head_major").value();
  EXPECT_LT(predict_backward_variant(problem, h200, warp_specialized).predicted_seconds,
            predict_backward_variant(problem, h200, plain).predicted_seconds);
}

TEST(BackwardPrediction, TheKnobsSharesAreTheMeasuredOnes) {
  const nlohmann::json measured =
      measured_file("bench/results/attention-backward-h200/tune-mma-sync.json");
  std::map<std::string, double> tflops;
  for (const nlohmann::json& row : measured.at("measurements")) {
    if (row.at("status") == "ok") {
      tflops[row.at("problem").get<std::string>() + " " + row.at("config").get<std::string>()] =
          row.at("tflops").get<double>();
    }
  }
  std::vector<double> narrow, deterministic, deterministic_causal;
  for (const auto& [name, rate] : tflops) {
    const std::string problem = name.substr(0, name.find(' '));
    const std::string key = name.substr(name.find(' ') + 1);
    const auto config = AttentionBackwardConfig::from_key(key);
    ASSERT_TRUE(config) << key;
    if (config->dq == DqAccumulation::deterministic) {
      AttentionBackwardConfig atomic = *config;
      atomic.dq = DqAccumulation::atomic;
      auto twin = tflops.find(problem + " " + atomic.key());
      if (twin == tflops.end()) continue;
      const bool causal = problem.find("_causal") != std::string::npos;
      (causal ? deterministic_causal : deterministic).push_back(rate / twin->second);
    } else if (config->block_n == 64) {
      AttentionBackwardConfig wide = *config;
      wide.block_n = 128;
      wide.warps = 8;
      auto twin = tflops.find(problem + " " + wide.key());
      if (twin != tflops.end()) narrow.push_back(rate / twin->second);
    }
  }
  ASSERT_GE(narrow.size(), 10u);
  ASSERT_GE(deterministic.size(), 10u);
  ASSERT_GE(deterministic_causal.size(), 10u);
  EXPECT_NEAR(kNarrowTileRateShare, median(narrow), 0.03);
  EXPECT_NEAR(kDeterministicRateShare, median(deterministic), 0.03);
  EXPECT_NEAR(kDeterministicCausalRateShare, median(deterministic_causal), 0.03);
}

TEST(BackwardPrediction, TheLaggedConsumersSharesAreTheMeasuredOnes) {
  const nlohmann::json measured = measured_file(
      "bench/results/attention-backward-ws-h200/consumer-sync-2026-11-26/consumer-sync.json");
  std::vector<double> plain, causal;
  for (const nlohmann::json& row : measured.at("rows")) {
    (row.at("causal").get<bool>() ? causal : plain)
        .push_back(row.at("lockstep_over_lagged").get<double>());
  }
  ASSERT_GE(plain.size(), 10u);
  ASSERT_GE(causal.size(), 10u);
  EXPECT_NEAR(kLaggedRateShare, median(plain), 0.005);
  // With the mask the median is within 1% of 1 and the twins stay tied.
  EXPECT_NEAR(median(causal), 1.0, 0.01);
  EXPECT_EQ(kLaggedCausalRateShare, 1.0);
  AttentionBackwardConfig lockstep =
      AttentionBackwardConfig::from_key("bwd-wgmma-m64n128w12s2-cyclic-grid-head_major").value();
  AttentionBackwardConfig lagged = lockstep;
  lagged.consumers = ConsumerSync::lagged;
  AttentionProblem plain_shape;
  plain_shape.head_dim = 128;
  AttentionProblem causal_shape = plain_shape;
  causal_shape.causal = true;
  EXPECT_LT(backward_rate_share(lagged, plain_shape), backward_rate_share(lockstep, plain_shape));
  EXPECT_EQ(backward_rate_share(lagged, causal_shape), backward_rate_share(lockstep, causal_shape));
}

// The measurements of a bench/backward_build_ab.sh output in bench/results (its lines "SIDE ROUND
// SHAPE CONFIG MEDIAN_MS TFLOPS STATUS" whose status is ok).
struct AbRun {
  std::string side, shape, config;
  double ms = 0;
};
std::vector<AbRun> ab_runs(const std::string& relative) {
  std::ifstream file(std::string(SWR_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(file) << relative;
  std::vector<AbRun> runs;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    AbRun run;
    std::string round, status;
    double tflops = 0;
    if (!(fields >> run.side >> round >> run.shape >> run.config >> run.ms >> tflops >> status)) {
      continue;
    }
    if (status == "ok") runs.push_back(run);
  }
  return runs;
}

// A the single CTAs and B the pairs: each shape's median of B over A's, by head dim.
TEST(BackwardPrediction, TheCtaPairsSharesAreTheMeasuredOnes) {
  std::map<std::string, std::map<std::string, std::vector<double>>> runs;  // shape -> side -> ms
  for (const AbRun& run :
       ab_runs("bench/results/attention-backward-ws-h200/cta-pairs-2026-11-27/ab-h200.txt")) {
    runs[run.shape][run.side].push_back(run.ms);
  }
  ASSERT_FALSE(runs.empty());
  std::map<int, std::vector<double>> ratios;  // head dim -> pair over single
  const std::regex head_dim("--head-dim([0-9]+)");
  for (const auto& [shape, sides] : runs) {
    std::smatch match;
    ASSERT_TRUE(std::regex_search(shape, match, head_dim)) << shape;
    ASSERT_EQ(sides.at("A").size(), 3u);
    ASSERT_EQ(sides.at("B").size(), 3u);
    ratios[std::stoi(match[1])].push_back(median(sides.at("B")) / median(sides.at("A")));
  }
  ASSERT_EQ(ratios[128].size(), 3u);
  ASSERT_EQ(ratios[64].size(), 2u);
  EXPECT_NEAR(1 / kCtaPairsRateShare, median(ratios[128]), 0.001);
  // At head dim 64 the twins are within 0.5% of each other and stay tied.
  EXPECT_NEAR(median(ratios[64]), 1.0, 0.005);
  EXPECT_EQ(kCtaPairsNarrowHeadRateShare, 1.0);

  AttentionBackwardConfig single =
      AttentionBackwardConfig::from_key("bwd-wgmma-m80n128w12s2-cyclic-grid-head_major").value();
  AttentionBackwardConfig pairs = single;
  pairs.cta_pairs = true;
  AttentionProblem shape;
  shape.head_dim = 128;
  EXPECT_GT(backward_rate_share(pairs, shape), backward_rate_share(single, shape));
  shape.head_dim = 64;
  EXPECT_EQ(backward_rate_share(pairs, shape), backward_rate_share(single, shape));
}

// The deeper ring's share: the ab_runs (both sides the same binary) of the two files that time
// each third-stage variant that adds dQ from registers beside its two-stage
// twin whose writer adds it; each file and head dim 64 shape's median over its twin's.
TEST(BackwardPrediction, TheDeeperRingByRegistersDqShareIsTheMeasuredOne) {
  std::vector<double> causal, plain;
  for (const char* name : {"ab-deeper.txt", "ab-deeper-causal.txt"}) {
    std::map<std::string, std::map<std::string, std::vector<double>>> runs;  // shape -> config
    for (const AbRun& run : ab_runs(
             std::string("bench/results/attention-backward-ws-h200/dq-from-registers-2026-11-28/") +
             name)) {
      runs[run.shape][run.config].push_back(run.ms);
    }
    for (const auto& [shape, configs] : runs) {
      // Head dim 64, where the space keeps it (at 128 the file times it against other tiles).
      if (shape.find("--head-dim64") == std::string::npos) continue;
      for (const auto& [key, times] : configs) {
        const AttentionBackwardConfig config = AttentionBackwardConfig::from_key(key).value();
        if (!config.dq_from_registers || config.stages != 3) continue;
        AttentionBackwardConfig twin = config;
        twin.dq_from_registers = false;
        twin.stages = 2;
        ASSERT_TRUE(configs.count(twin.key())) << shape << " " << key;
        const bool masked = shape.find("--causal") != std::string::npos;
        (masked ? causal : plain).push_back(median(times) / median(configs.at(twin.key())));
      }
    }
  }
  ASSERT_EQ(causal.size(), 5u);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_NEAR(1 / kDeeperRingByRegistersDqRateShare, median(causal), 0.001);
  // Without the mask it lost, which is why the space keeps it to causal problems.
  EXPECT_GT(plain.front(), 1.05);

  AttentionBackwardConfig twin =
      AttentionBackwardConfig::from_key("bwd-wgmma-m128n128w12s2-cyclic-grid-head_major-lag")
          .value();
  AttentionBackwardConfig deeper = twin;
  deeper.stages = 3;
  deeper.dq_from_registers = true;
  AttentionProblem shape;
  shape.head_dim = 64;
  shape.causal = true;
  EXPECT_GT(backward_rate_share(deeper, shape), backward_rate_share(twin, shape));
}

// The later measurement that the pair share's comment cites, and for which --model-top measures
// each top pair's twin: "ROUND SHAPE CONFIG MEDIAN_MS" lines, every causal lagged m80 pair slower
// than its single-CTA twin in the same round (1.004-1.013x).
TEST(BackwardPrediction, TheCausalPairsLaterMeasuredSlowerThanTheirTwins) {
  const std::string relative =
      "bench/results/attention-backward-ws-h200/rotation-2026-11-28/pairs-h200.txt";
  std::ifstream file(std::string(SWR_SOURCE_DIR) + "/" + relative);
  ASSERT_TRUE(file) << relative;
  std::map<std::string, double> ms;  // "round shape config" -> ms
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    std::string round, shape, config;
    double median_ms = 0;
    if (line.empty() || line[0] == '#' || !(fields >> round >> shape >> config >> median_ms)) {
      continue;
    }
    ms[round + " " + shape + " " + config] = median_ms;
  }
  std::vector<double> ratios;
  const std::string pair = "-pair-lag";
  for (const auto& [key, time] : ms) {
    if (key.size() < pair.size() || key.compare(key.size() - pair.size(), pair.size(), pair) != 0) {
      continue;
    }
    const std::string twin = key.substr(0, key.size() - pair.size()) + "-lag";
    ASSERT_EQ(ms.count(twin), 1u) << twin;
    ratios.push_back(time / ms.at(twin));
  }
  ASSERT_EQ(ratios.size(), 8u);  // 2 shapes x 2 walks x 2 rounds
  EXPECT_GT(*std::min_element(ratios.begin(), ratios.end()), 1.0035);
  EXPECT_LT(*std::max_element(ratios.begin(), ratios.end()), 1.0135);
}

// The replay against the L2 counters the tuner measured (lts misses, which count a sector both
// GH100 partitions miss about 1.43 times: the profile's l2_shared_miss_factor): the measured
// misses over that factor and the predicted ones, per variant.
struct CountedMisses {
  std::string config;
  double predicted = 0, measured = 0;
};

AttentionBackwardProblem problem_of(const std::string& key) {
  std::smatch m;
  const std::regex form(R"(bwd_b(\d+)_h(\d+)(?:_kv(\d+))?_sq(\d+)_skv(\d+)_d(\d+)_bf16_(\w+))");
  EXPECT_TRUE(std::regex_match(key, m, form)) << key;
  AttentionProblem shape{std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[4]), std::stoi(m[5]),
                         std::stoi(m[6]), DataType::bf16,  m[7] == "causal"};
  if (m[3].matched) shape.kv_heads = std::stoi(m[3]);
  return AttentionBackwardProblem{shape};
}

CountedMisses counted(const std::string& gpu_name, const std::string& problem,
                      const std::string& key, double measured) {
  const GpuProfile gpu = find_gpu_profile(gpu_name).value();
  const auto config = AttentionBackwardConfig::from_key(key);
  EXPECT_TRUE(config) << key;
  const BackwardPrediction p = predict_backward_variant(problem_of(problem), gpu, *config);
  EXPECT_TRUE(p.runnable) << key << ": " << p.note;
  return {key, static_cast<double>(p.misses), measured / gpu.l2_shared_miss_factor};
}

// The grid variants of each shape in a tune log with counters (an H100's), by head mapping.
using GridMappings = std::map<std::string, std::map<std::string, CountedMisses>>;

GridMappings grid_mappings(const std::string& relative) {
  std::istringstream log(read_maybe_xz(std::string(SWR_SOURCE_DIR) + "/" + relative));
  const std::regex tuning(R"(^tuning attention-backward (\S+) on h100 .*)");
  const std::regex row(R"(^\[\s*\d+/\d+\] (\S+-grid-\S+)\s+ok .* L2 misses ([0-9.e+]+) .*)");
  GridMappings by_problem;
  std::string problem, line;
  std::smatch m;
  while (std::getline(log, line)) {
    if (std::regex_match(line, m, tuning)) problem = m[1];
    if (std::regex_match(line, m, row)) {
      const std::string key = m[1];
      const bool interleaved = key.find("heads_interleaved") != std::string::npos;
      by_problem[problem][interleaved ? "interleaved" : "head_major"] =
          counted("h100", problem, key, std::stod(m[2]));
    }
  }
  return by_problem;
}

// In sample, as the next (the replay's one cache was chosen on both), on an H100: grouped K/V
// heads, 32 over 8, and 16 heads without, causal, S = 32768, D128; each K/V head's CTAs walk 4
// heads' Q tiles at GQA. The grid variants' misses are within 2x of the counters and in their
// order: head-major ahead of the interleaved heads at both shapes. (With a copy per partition the
// replay put head-major's misses at GQA 8.3x the counters, behind the interleaved heads.)
TEST(BackwardPrediction, TheReplayFollowsTheCountersAtGqa) {
  const GridMappings by_problem = grid_mappings(
      "bench/results/attention-backward-ws-h200/dynamic-claim-2026-11-26/"
      "gqa-persistence-h100.txt.xz");
  ASSERT_EQ(by_problem.size(), 2u);
  for (const auto& [name, variants] : by_problem) {
    SCOPED_TRACE(name);
    ASSERT_EQ(variants.size(), 2u);
    for (const auto& [mapping, misses] : variants) {
      EXPECT_GT(misses.predicted / misses.measured, 0.5) << misses.config;
      EXPECT_LT(misses.predicted / misses.measured, 2.0) << misses.config;
    }
    ASSERT_LT(variants.at("head_major").measured, variants.at("interleaved").measured);
    EXPECT_LT(variants.at("head_major").predicted, variants.at("interleaved").predicted);
  }
}

// Held out (measured after the choice): five shapes, GQA 32/8 causal and not, GQA 32/4 D64, MQA
// and 32 heads at D64. Where the counters put the two head mappings more than 2x apart (three
// of them), the replay orders them the same way. (The copies per partition put head-major
// behind at GQA 32/8 causal S16384.)
TEST(BackwardPrediction, TheReplayOrdersTheHeadMappingsOfHeldOutShapes) {
  const GridMappings by_problem = grid_mappings(
      "bench/results/attention-backward-ws-h200/l2-replay-2026-11-26/heldout-h100.log.xz");
  ASSERT_EQ(by_problem.size(), 5u);
  int apart = 0;
  for (const auto& [name, variants] : by_problem) {
    SCOPED_TRACE(name);
    ASSERT_EQ(variants.size(), 2u);
    const CountedMisses& major = variants.at("head_major");
    const CountedMisses& interleaved = variants.at("interleaved");
    if (std::max(major.measured, interleaved.measured) <
        2 * std::min(major.measured, interleaved.measured)) {
      continue;
    }
    ++apart;
    EXPECT_EQ(major.predicted < interleaved.predicted, major.measured < interleaved.measured);
  }
  EXPECT_EQ(apart, 3);
}

// In sample: the H200's whole warp-specialized space of B2 H16 S16384 D128, 113 variants. The
// median variant's predicted misses are within 25% of its counters' (0.99 measured; a copy per
// partition gave 2.3x).
TEST(BackwardPrediction, TheReplayFollowsTheCountersOfAWholeSpace) {
  const nlohmann::json measured =
      measured_file("bench/results/attention-backward-ws-h200/full-tune.json");
  const GpuProfile h200 = find_gpu_profile("h200").value();
  std::string problem;
  std::vector<AttentionBackwardConfig> configs;
  std::vector<double> counted_sectors;
  for (const nlohmann::json& row : measured.at("measurements")) {
    if (row.at("status") != "ok" || !row.contains("l2_sector_misses")) continue;
    if (problem.empty()) problem = row.at("problem").get<std::string>();
    ASSERT_EQ(row.at("problem").get<std::string>(), problem);  // one shape's space
    const auto config = AttentionBackwardConfig::from_key(row.at("config").get<std::string>());
    ASSERT_TRUE(config) << row.dump();
    configs.push_back(*config);
    counted_sectors.push_back(row.at("l2_sector_misses").get<double>() /
                              h200.l2_shared_miss_factor);
  }
  ASSERT_GE(configs.size(), 100u);
  const std::vector<BackwardPrediction> predicted =
      predict_backward_space(problem_of(problem), h200, configs);
  std::vector<double> ratios;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    ASSERT_TRUE(predicted[i].runnable) << predicted[i].config_key << ": " << predicted[i].note;
    ratios.push_back(static_cast<double>(predicted[i].misses) / counted_sectors[i]);
  }
  EXPECT_GT(median(ratios), 0.8);
  EXPECT_LT(median(ratios), 1.25);
}

// Held out: another head dim and shape. The predicted order keeps every atomic 128-row variant
// ahead of the narrow and the deterministic ones, as measured, and the predicted times stay
// within 0.5x..1.6x of the measured ones (the rule knows no persistence or Q-tile height: the
// worst, a static head-major deterministic variant, ran 1.8x the predicted time).
TEST(BackwardPrediction, TheTimeRuleOnAHeldOutShape) {
  const nlohmann::json measured = measured_file("bench/results/training-h200/tune-bwd-gpt.json");
  const GpuProfile h200 = find_gpu_profile("h200").value();
  AttentionProblem shape;
  shape.batch = 8;
  shape.heads = 12;
  shape.seq_q = shape.seq_kv = 2048;
  shape.head_dim = 64;
  shape.dtype = DataType::bf16;
  shape.causal = true;
  const AttentionBackwardProblem problem{shape};
  double slowest_wide_atomic = 0, fastest_other = 1e9;
  int rows = 0;
  for (const nlohmann::json& row : measured.at("measurements")) {
    const auto config = AttentionBackwardConfig::from_key(row.at("config").get<std::string>());
    ASSERT_TRUE(config);
    const double measured_ms = row.at("median_ms").get<double>();
    const BackwardPrediction predicted = predict_backward_variant(problem, h200, *config);
    ASSERT_TRUE(predicted.runnable) << predicted.note;
    const double ratio = predicted.predicted_seconds * 1e3 / measured_ms;
    EXPECT_GT(ratio, 0.5) << config->key();
    EXPECT_LT(ratio, 1.6) << config->key();
    if (config->block_n == 128 && config->dq == DqAccumulation::atomic) {
      slowest_wide_atomic = std::max(slowest_wide_atomic, predicted.predicted_seconds);
    } else {
      fastest_other = std::min(fastest_other, predicted.predicted_seconds);
    }
    ++rows;
  }
  EXPECT_EQ(rows, 13);
  EXPECT_LT(slowest_wide_atomic, fastest_other);
}

}  // namespace
}  // namespace swr::model
