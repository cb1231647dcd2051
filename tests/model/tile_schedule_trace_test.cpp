// The host replay of the kernel's schedule, checked against hand-worked cases of
// templates/attention/attention_schedule.cuh.
#include "model/schedule_replay.hpp"

#include <gtest/gtest.h>

#include "model_test_support.hpp"

namespace swr::model {
namespace {

using testing::attention_config;
using testing::attention_problem;

ScheduleShape shape_of(int batch_heads, int seq, int block_m, int block_n, bool causal) {
  return ScheduleShape::of(attention_problem(batch_heads, 1, seq, 64, causal),
                           TileShape{block_m, block_n});
}

TEST(TileSchedule, ShapeCountsTiles) {
  const ScheduleShape shape = shape_of(3, 1000, 128, 64, false);
  EXPECT_EQ(shape.q_tiles, 8);
  EXPECT_EQ(shape.kv_tiles, 16);
  EXPECT_EQ(shape.total_tiles, 24);
}

TEST(TileSchedule, HeadMajorAndInterleaved) {
  const ScheduleShape shape = shape_of(3, 512, 128, 64, false);  // 4 q tiles, 3 heads
  EXPECT_EQ(tile_coordinate(5, shape, TileSwizzle::head_major, 1), (TileCoordinate{1, 1}));
  EXPECT_EQ(tile_coordinate(11, shape, TileSwizzle::head_major, 1), (TileCoordinate{2, 3}));
  EXPECT_EQ(tile_coordinate(5, shape, TileSwizzle::heads_interleaved, 1), (TileCoordinate{2, 1}));
  EXPECT_EQ(tile_coordinate(9, shape, TileSwizzle::heads_interleaved, 1), (TileCoordinate{0, 3}));
}

TEST(TileSchedule, HeadGroupsWithAShortLastGroup) {
  const ScheduleShape shape = shape_of(5, 512, 128, 64, false);  // 4 q tiles, 5 heads
  // Groups of 2 heads: tiles 0..7 interleave heads 0 and 1, 8..15 heads 2 and 3, 16..19 head 4.
  EXPECT_EQ(tile_coordinate(0, shape, TileSwizzle::head_groups, 2), (TileCoordinate{0, 0}));
  EXPECT_EQ(tile_coordinate(3, shape, TileSwizzle::head_groups, 2), (TileCoordinate{1, 1}));
  EXPECT_EQ(tile_coordinate(8, shape, TileSwizzle::head_groups, 2), (TileCoordinate{2, 0}));
  EXPECT_EQ(tile_coordinate(15, shape, TileSwizzle::head_groups, 2), (TileCoordinate{3, 3}));
  EXPECT_EQ(tile_coordinate(17, shape, TileSwizzle::head_groups, 2), (TileCoordinate{4, 1}));
  EXPECT_EQ(tile_coordinate(19, shape, TileSwizzle::head_groups, 2), (TileCoordinate{4, 3}));
}

TEST(TileSchedule, CausalReversesQTilesAndLimitsSteps) {
  const ScheduleShape shape = shape_of(1, 1000, 128, 64, true);  // 8 q tiles, 16 kv tiles
  EXPECT_EQ(tile_coordinate(0, shape, TileSwizzle::head_major, 1).q_tile, 7);
  EXPECT_EQ(tile_coordinate(7, shape, TileSwizzle::head_major, 1).q_tile, 0);
  EXPECT_EQ(kv_steps_of(shape, 0), 2);   // rows 0..127 see keys 0..127
  EXPECT_EQ(kv_steps_of(shape, 6), 14);  // rows 768..895
  EXPECT_EQ(kv_steps_of(shape, 7), 16);  // rows 896..999 (partial): keys up to 999
  EXPECT_EQ(kv_steps_of(shape_of(1, 1000, 128, 64, false), 0), 16);
}

TEST(TileSchedule, SawtoothFlipsOnOddRounds) {
  EXPECT_EQ(kv_tile_at(KvOrder::cyclic, 2, 10, 1), 2);
  EXPECT_EQ(kv_tile_at(KvOrder::sawtooth, 2, 10, 0), 2);
  EXPECT_EQ(kv_tile_at(KvOrder::sawtooth, 2, 10, 1), 7);
  EXPECT_EQ(kv_tile_at(KvOrder::sawtooth, 0, 3, 3), 2);  // causal range of 3 tiles, backwards
}

TEST(TileDispenser, StaticStridesByTheGrid) {
  TileDispenser dispenser(Persistence::static_loop, 10, 4);
  EXPECT_EQ(dispenser.slot_count(), 4);
  EXPECT_EQ(dispenser.cta_count(), 4);
  std::vector<std::pair<std::int64_t, int>> slot_one;
  while (auto next = dispenser.next(1)) slot_one.emplace_back(next->linear_tile, next->round);
  EXPECT_EQ(slot_one, (std::vector<std::pair<std::int64_t, int>>{{1, 0}, {5, 1}, {9, 2}}));
}

TEST(TileDispenser, GridRunsBlocksInOrderWithRoundsPerWave) {
  TileDispenser dispenser(Persistence::grid, 7, 3);
  EXPECT_EQ(dispenser.slot_count(), 3);
  EXPECT_EQ(dispenser.cta_count(), 7);
  EXPECT_EQ(dispenser.next(0)->linear_tile, 0);
  EXPECT_EQ(dispenser.next(2)->linear_tile, 2);
  EXPECT_EQ(dispenser.next(1)->linear_tile, 1);
  // Slot 2 frees first: it runs block 3, which is in the second wave.
  const auto third = dispenser.next(2);
  EXPECT_EQ(third->linear_tile, 3);
  EXPECT_EQ(third->round, 1);
  EXPECT_EQ(dispenser.next(0)->linear_tile, 4);
  EXPECT_EQ(dispenser.next(0)->linear_tile, 5);
  const auto last = dispenser.next(1);
  EXPECT_EQ(last->linear_tile, 6);
  EXPECT_EQ(last->round, 2);
  EXPECT_FALSE(dispenser.next(2).has_value());
}

TEST(TileDispenser, DynamicCountsRoundsPerCta) {
  TileDispenser dispenser(Persistence::dynamic, 6, 2);
  EXPECT_EQ(dispenser.next(0)->linear_tile, 0);
  EXPECT_EQ(dispenser.next(1)->linear_tile, 1);
  auto claim = dispenser.next(1);  // slot 1 finished first: counter 0 + gridDim 2
  EXPECT_EQ(claim->linear_tile, 2);
  EXPECT_EQ(claim->round, 1);
  claim = dispenser.next(1);
  EXPECT_EQ(claim->linear_tile, 3);
  EXPECT_EQ(claim->round, 2);
  claim = dispenser.next(0);
  EXPECT_EQ(claim->linear_tile, 4);
  EXPECT_EQ(claim->round, 1);
}

TEST(TileDispenser, CtaLimitCapsPersistentGridsOnly) {
  EXPECT_EQ(TileDispenser(Persistence::static_loop, 100, 16, 4).slot_count(), 4);
  EXPECT_EQ(TileDispenser(Persistence::grid, 100, 16, 4).slot_count(), 16);
  EXPECT_EQ(TileDispenser(Persistence::dynamic, 3, 16).slot_count(), 3);
}

TEST(StaticCtaReads, SawtoothWalksBackOnTheSecondTile) {
  const ScheduleShape shape = shape_of(1, 256, 64, 64, false);  // 4 q tiles, 4 kv tiles
  const AttentionConfig config =
      attention_config(64, 64, 4, KvOrder::sawtooth, Persistence::static_loop);
  const std::vector<KvRead> reads = static_cta_reads(shape, config, 2, 1, 100);
  ASSERT_EQ(reads.size(), 8u);  // tiles 1 and 3, 4 steps each
  const int expected[] = {0, 1, 2, 3, 3, 2, 1, 0};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(reads[i].kv_tile, expected[i]) << i;
    EXPECT_EQ(reads[i].round, i / 4);
    EXPECT_EQ(reads[i].tile.q_tile, i < 4 ? 1 : 3);
  }
}

TEST(StaticCtaReads, CausalSawtoothStartsAtTheDiagonal) {
  const ScheduleShape shape = shape_of(1, 256, 64, 64, true);  // q tiles 3,2,1,0 in order
  const AttentionConfig config =
      attention_config(64, 64, 4, KvOrder::sawtooth, Persistence::static_loop);
  const std::vector<KvRead> reads = static_cta_reads(shape, config, 2, 0, 100);
  // CTA 0 takes linear tiles 0 (q tile 3, 4 steps) and 2 (q tile 1, 2 steps, backwards).
  std::vector<int> tiles;
  for (const KvRead& read : reads) tiles.push_back(read.kv_tile);
  EXPECT_EQ(tiles, (std::vector<int>{0, 1, 2, 3, 1, 0}));
}

}  // namespace
}  // namespace swr::model
