// The progress model: lock-step ticks, runs of CTAs on one tile, event-driven tile claims, skew.
#include "model/schedule_replay.hpp"

#include <gtest/gtest.h>

#include <string>

#include "model_test_support.hpp"

namespace swr::model {
namespace {

using testing::attention_config;
using testing::attention_problem;

// "k0@0x2" = K tile 0 read by 2 slots from slot 0; ticks separated by " | ".
std::string describe(WavefrontInterleaving& wave, int max_ticks = 100) {
  const char names[] = {'q', 'k', 'v', 'o'};
  std::string text;
  std::vector<TileAccess> accesses;
  for (int tick = 0; tick < max_ticks && wave.next_tick(accesses); ++tick) {
    if (!text.empty()) text += " | ";
    for (std::size_t i = 0; i < accesses.size(); ++i) {
      const TileAccess& a = accesses[i];
      if (i) text += " ";
      text += names[static_cast<int>(a.tensor)] + std::to_string(a.batch_head) + "." +
              std::to_string(a.tile) + "@" + std::to_string(a.slot);
      if (a.count > 1) text += "x" + std::to_string(a.count);
    }
  }
  return text;
}

TEST(WavefrontInterleaving, LockStepWaveReadsEachTileAsOneRun) {
  // One head, 2 q tiles of 64 rows, 2 kv tiles; 2 CTAs static, cyclic.
  const ScheduleShape shape =
      ScheduleShape::of(attention_problem(1, 1, 128, 64, false), TileShape{64, 64});
  WavefrontInterleaving wave(
      shape, attention_config(64, 64, 4, KvOrder::cyclic, Persistence::static_loop), 2, 0, {});
  EXPECT_EQ(describe(wave), "q0.0@0 q0.1@1 k0.0@0x2 v0.0@0x2 | k0.1@0x2 v0.1@0x2 o0.0@0 o0.1@1 | ");
  EXPECT_EQ(wave.kv_steps_done(), 4);
}

TEST(WavefrontInterleaving, SawtoothSecondRoundRunsBackwards) {
  // 4 q tiles, 2 CTAs: the second round (tiles 2 and 3) walks kv tiles 1, 0.
  const ScheduleShape shape =
      ScheduleShape::of(attention_problem(1, 1, 256, 64, false), TileShape{64, 128});
  WavefrontInterleaving wave(
      shape, attention_config(64, 128, 4, KvOrder::sawtooth, Persistence::static_loop), 2, 0, {});
  EXPECT_EQ(describe(wave),
            "q0.0@0 q0.1@1 k0.0@0x2 v0.0@0x2 | k0.1@0x2 v0.1@0x2 o0.0@0 o0.1@1 | "
            "q0.2@0 q0.3@1 k0.1@0x2 v0.1@0x2 | k0.0@0x2 v0.0@0x2 o0.2@0 o0.3@1 | ");
}

TEST(WavefrontInterleaving, CausalTilesFinishAtDifferentTimesAndClaimInOrder) {
  // Causal, 4 q tiles of 64 over 4 kv tiles: lengths 4, 3, 2, 1 in linear order. Dynamic with 2
  // CTAs: slot 1 (3 steps) finishes first and claims tile 2, slot 0 then claims tile 3.
  const ScheduleShape shape =
      ScheduleShape::of(attention_problem(1, 1, 256, 64, true), TileShape{64, 64});
  WavefrontInterleaving wave(
      shape, attention_config(64, 64, 4, KvOrder::cyclic, Persistence::dynamic), 2, 0, {});
  EXPECT_EQ(describe(wave),
            "q0.3@0 q0.2@1 k0.0@0x2 v0.0@0x2 | k0.1@0x2 v0.1@0x2 | k0.2@0x2 v0.2@0x2 o0.2@1 | "
            "q0.1@1 k0.3@0 k0.0@1 v0.3@0 v0.0@1 o0.3@0 | q0.0@0 k0.0@0 k0.1@1 v0.0@0 v0.1@1 "
            "o0.0@0 o0.1@1 | ");
  EXPECT_EQ(wave.kv_steps_done(), 4 + 3 + 2 + 1);
}

TEST(WavefrontInterleaving, GridRoundIsTheWaveOfTheTile) {
  // Grid, wave of 2, sawtooth: tiles 2 and 3 run in wave 1, backwards, in whichever slot frees.
  const ScheduleShape shape =
      ScheduleShape::of(attention_problem(1, 1, 256, 64, false), TileShape{64, 128});
  WavefrontInterleaving wave(
      shape, attention_config(64, 128, 4, KvOrder::sawtooth, Persistence::grid), 2, 0, {});
  const std::string text = describe(wave);
  EXPECT_NE(text.find("q0.2@0 q0.3@1 k0.1@0x2"), std::string::npos) << text;
}

TEST(WavefrontInterleaving, SkewDelaysLaterSlots) {
  const ScheduleShape shape =
      ScheduleShape::of(attention_problem(1, 1, 128, 64, false), TileShape{64, 64});
  ProgressModel skew;
  skew.skew_steps = 2;  // slot 1 of 2 starts 1 tick late
  WavefrontInterleaving wave(
      shape, attention_config(64, 64, 4, KvOrder::cyclic, Persistence::static_loop), 2, 0, skew);
  EXPECT_EQ(describe(wave),
            "q0.0@0 k0.0@0 v0.0@0 | q0.1@1 k0.1@0 k0.0@1 v0.1@0 v0.0@1 o0.0@0 | "
            "k0.1@1 v0.1@1 o0.1@1 | ");
}

}  // namespace
}  // namespace swr::model
