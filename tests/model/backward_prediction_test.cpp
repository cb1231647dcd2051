// The backward's L2 model (model/backward_prediction.hpp): what it counts per step and tile (the
// requested sectors by formula), misses between the compulsory ones and the requests, the sawtooth
// walk saving misses once a head's Q and dO outgrow an L2 partition (and little before), and the
// time rule's rate recomputed from the measured file it cites.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "model/backward_prediction.hpp"

namespace swr::model {
namespace {

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

TEST(BackwardPrediction, SawtoothSavesMissesOnlyWhereQAndDoOutgrowTheL2) {
  const GpuProfile gpu = find_gpu_profile("h200").value();
  for (int seq : {8192, 65536}) {
    SCOPED_TRACE(seq);
    // One head a batch: Q and dO of a head are 4 MiB at 8192 rows (they stay in a 30 MiB
    // partition), 32 MiB at 65536 (they do not).
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
  std::ifstream file(std::string(SWR_SOURCE_DIR) +
                     "/bench/results/attention-backward-h200/tune-mma-sync.json");
  ASSERT_TRUE(file) << "the measured file the rate cites";
  const nlohmann::json measured = nlohmann::json::parse(file);
  double best = 0;
  for (const nlohmann::json& row : measured.at("measurements")) {
    if (row.at("status") == "ok" &&
        row.at("problem").get<std::string>().find("_d128_") != std::string::npos) {
      best = std::max(best, row.at("tflops").get<double>());
    }
  }
  const GpuProfile h200 = find_gpu_profile("h200").value();
  EXPECT_NEAR(kMmaSyncBackwardPeakFraction, best * 1e12 / h200.peak_tensor_flops, 0.0005);
}

}  // namespace
}  // namespace swr::model
