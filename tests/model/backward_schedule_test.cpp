// The attention backward's schedule (templates/attention/backward/backward_schedule.cuh), built by
// the host compiler: which Q tiles see a K/V tile under every causal alignment, the Q walk
// (cyclic, and sawtooth reversed on odd rounds) over a GQA group's heads, and the kernels' two
// ways of walking it (the division-free BackwardWalk, the warp-specialized producer's counted
// positions), which must visit exactly backward_step_at's steps in its order.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "attention/backward/backward_schedule.cuh"

namespace swr::attention {
namespace {

TEST(BackwardSchedule, QTilesThatSeeAKvTile) {
  // 300 query rows in tiles of 64 (5 tiles), 256 keys in tiles of 64 (4 tiles).
  for (int kv_tile = 0; kv_tile < 4; ++kv_tile) {
    EXPECT_EQ(first_q_tile_of_kv_tile(false, kv_tile, 64, 64, 300, 0), 0);
  }
  // Top-left: rows i >= 64 * kv_tile see the tile's first key.
  EXPECT_EQ(first_q_tile_of_kv_tile(true, 0, 64, 64, 300, 0), 0);
  EXPECT_EQ(first_q_tile_of_kv_tile(true, 1, 64, 64, 300, 0), 1);
  EXPECT_EQ(first_q_tile_of_kv_tile(true, 3, 64, 64, 300, 0), 3);
  // Bottom-right with S_q = 100 < S_kv = 256: shift 156, row 0 already sees keys 0..156.
  EXPECT_EQ(first_q_tile_of_kv_tile(true, 2, 64, 64, 100, 156), 0);
  EXPECT_EQ(first_q_tile_of_kv_tile(true, 3, 64, 64, 100, 156), 0);
  // Bottom-right with S_q = 300 > S_kv = 77: shift -223, K/V tile 1 (keys 64..) is first seen by
  // row 287, in Q tile 4; a K/V tile no row sees has none.
  EXPECT_EQ(first_q_tile_of_kv_tile(true, 1, 64, 64, 300, -223), 4);
  EXPECT_EQ(first_q_tile_of_kv_tile(true, 2, 64, 64, 200, -123), 200 / 64 + 1);
}

TEST(BackwardSchedule, EveryStepOnceInTheOrderOfTheRound) {
  for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
    for (int round = 0; round < 3; ++round) {
      const int heads = 3, first = 2, tiles = 7;
      std::set<std::pair<int, int>> seen;
      for (int step = 0; step < heads * (tiles - first); ++step) {
        const BackwardStep at = backward_step_at(order, step, heads, first, tiles, round);
        EXPECT_GE(at.q_tile, first);
        EXPECT_LT(at.q_tile, tiles);
        EXPECT_TRUE(seen.insert({at.head_in_group, at.q_tile}).second);
        if (step == 0) {
          const bool reversed = order == KvOrder::sawtooth && round % 2 == 1;
          EXPECT_EQ(at.head_in_group, reversed ? heads - 1 : 0);
          EXPECT_EQ(at.q_tile, reversed ? tiles - 1 : first);
        }
      }
      EXPECT_EQ(seen.size(), static_cast<std::size_t>(heads * (tiles - first)));
    }
  }
}

// Every walk (both orders, rounds 0..3, groups of 1, 2 and 4 query heads, Q tiles from 0..3 up to
// 6): the steps that `walker(order, heads, first, tiles, round)` hands out, one call of it a step
// (with the step's index), must be backward_step_at's, in its order.
template <class Walker>
void expect_backward_step_at_order(Walker&& walker) {
  for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
    for (int round = 0; round < 4; ++round) {
      for (int heads : {1, 2, 4}) {
        for (int first = 0; first < 4; ++first) {
          for (int tiles = first + 1; tiles < 7; ++tiles) {
            auto next = walker(order, heads, first, tiles, round);
            for (int step = 0; step < heads * (tiles - first); ++step) {
              const BackwardStep expected =
                  backward_step_at(order, step, heads, first, tiles, round);
              const BackwardStep at = next(step);
              ASSERT_EQ(at.head_in_group, expected.head_in_group)
                  << "step " << step << " of " << heads << " heads, tiles " << first << ".."
                  << tiles << ", round " << round;
              ASSERT_EQ(at.q_tile, expected.q_tile) << "step " << step;
            }
          }
        }
      }
    }
  }
}

TEST(BackwardSchedule, TheKernelsWalkIsBackwardStepAt) {
  expect_backward_step_at_order([](KvOrder order, int heads, int first, int tiles, int round) {
    const BackwardWalk walk(order, heads, first, tiles, round);
    return [walk, at = walk.start()](int) mutable {
      const BackwardStep now = at;
      walk.advance(at);
      return now;
    };
  });
}

TEST(BackwardSchedule, TheProducersPositionsAreBackwardStepAts) {
  expect_backward_step_at_order([](KvOrder order, int heads, int first, int tiles, int round) {
    const int steps = heads * (tiles - first);
    const BackwardPositions positions = backward_positions(order, steps, round);
    return [=, index = positions.first](int step) mutable {
      // The producer stops at the last position, which is the last step's.
      EXPECT_EQ(index == positions.last, step == steps - 1) << "step " << step;
      const BackwardStep at = backward_step_of_index(index, first, tiles);
      index += positions.stride;
      return at;
    };
  });
}

// CTA pairs' units (backward_tile_unit): single CTAs take backward_tile_coord's tiles; pairs take
// every (batch, K/V head, K/V tile) once, two neighbouring tiles of one head a unit, in the order
// of backward_tile_coord's units, with one member past the last tile where kv_tiles is odd.
TEST(BackwardSchedule, CtaPairsTakeEveryTileOnceInUnitsOfNeighbours) {
  for (TileSwizzle swizzle :
       {TileSwizzle::head_major, TileSwizzle::heads_interleaved, TileSwizzle::head_groups}) {
    for (int kv_tiles = 1; kv_tiles <= 7; ++kv_tiles) {
      for (int batch_kv_heads = 1; batch_kv_heads <= 5; ++batch_kv_heads) {
        const int group = swizzle == TileSwizzle::head_groups ? 2 : 1;
        ASSERT_EQ(backward_tile_count(kv_tiles, batch_kv_heads, 1), kv_tiles * batch_kv_heads);
        for (int linear = 0; linear < kv_tiles * batch_kv_heads; ++linear) {
          const BackwardTileUnit single =
              backward_tile_unit(swizzle, group, linear, kv_tiles, batch_kv_heads, 1);
          const TileCoord coord =
              backward_tile_coord(swizzle, group, linear, kv_tiles, batch_kv_heads);
          EXPECT_EQ(single.batch_head, coord.batch_head);
          EXPECT_EQ(single.kv_tile, coord.q_tile);
          EXPECT_EQ(single.first_kv_tile, coord.q_tile);
        }
        const int count = backward_tile_count(kv_tiles, batch_kv_heads, 2);
        ASSERT_EQ(count, (kv_tiles + 1) / 2 * 2 * batch_kv_heads);
        std::set<std::pair<int, int>> seen;
        int past_the_end = 0;
        for (int linear = 0; linear < count; linear += 2) {
          const BackwardTileUnit first =
              backward_tile_unit(swizzle, group, linear, kv_tiles, batch_kv_heads, 2);
          const BackwardTileUnit second =
              backward_tile_unit(swizzle, group, linear + 1, kv_tiles, batch_kv_heads, 2);
          const TileCoord unit =
              backward_tile_coord(swizzle, group, linear / 2, (kv_tiles + 1) / 2, batch_kv_heads);
          EXPECT_EQ(first.batch_head, unit.batch_head);
          EXPECT_EQ(second.batch_head, unit.batch_head);
          EXPECT_EQ(first.kv_tile, 2 * unit.q_tile);
          EXPECT_EQ(second.kv_tile, first.kv_tile + 1);
          EXPECT_EQ(first.first_kv_tile, first.kv_tile);
          EXPECT_EQ(second.first_kv_tile, first.kv_tile);
          for (const BackwardTileUnit& member : {first, second}) {
            if (member.kv_tile >= kv_tiles) {
              ++past_the_end;
              EXPECT_EQ(member.kv_tile, kv_tiles);
              continue;
            }
            EXPECT_TRUE(seen.insert({member.batch_head, member.kv_tile}).second);
          }
        }
        EXPECT_EQ(static_cast<int>(seen.size()), kv_tiles * batch_kv_heads);
        // Both members walk in one round, odd waves included; single CTAs in grid_round's.
        for (int wave = 1; wave <= 5; ++wave) {
          for (int linear = 0; linear < count; ++linear) {
            EXPECT_EQ(backward_unit_round(linear, wave, 2),
                      backward_unit_round(linear ^ 1, wave, 2));
            EXPECT_EQ(backward_unit_round(linear, wave, 1), grid_round(linear, wave));
          }
        }
        EXPECT_EQ(past_the_end, kv_tiles % 2 * batch_kv_heads);
      }
    }
  }
}

// The last partial wave's split (backward_last_wave): every step of every unit is walked by
// exactly one scheduled unit, a split unit's parts are consecutive and cover its walk in order,
// and the split is taken exactly where the rule says: the tail of a wave (or every unit, under a
// wave), at most kBackwardSplitUnits of them, in as many parts as the idle SMs allow, up to
// kBackwardSplitParts and the unit's steps.
TEST(BackwardSchedule, TheLastWavesPartsWalkEveryStepOnce) {
  for (int wave : {1, 2, 3, 5, 8, 13, 32, 66, 132}) {
    for (int units = 1; units <= 70; ++units) {
      for (int steps = 1; steps <= 9; ++steps) {
        const BackwardLastWave split = backward_last_wave(units, wave, steps);
        const int tail = units % wave;
        int parts = tail > 0 ? std::min({wave / tail, kBackwardSplitParts, steps}) : 1;
        if (tail > kBackwardSplitUnits || parts < 2) parts = 1;
        ASSERT_EQ(split.parts, parts) << units << " units, wave " << wave << ", " << steps;
        ASSERT_EQ(split.whole, parts > 1 ? units - tail : units);
        const int scheduled = backward_scheduled_units(split, units);
        std::vector<std::vector<int>> walked(units, std::vector<int>(steps, 0));
        int last_unit = -1, next_first = 0;
        for (int s = 0; s < scheduled; ++s) {
          const BackwardUnitPart at = backward_unit_part(split, s);
          ASSERT_GE(at.unit, 0);
          ASSERT_LT(at.unit, units);
          ASSERT_EQ(at.part < 0, at.unit < split.whole);
          const BackwardPartSteps range = backward_part_steps(split, at.part, steps);
          ASSERT_GE(range.count, 1) << "no part is empty";
          if (at.part >= 0) {  // a unit's parts in order, each from where the last ended
            if (at.unit != last_unit) next_first = 0;
            EXPECT_EQ(range.first, next_first);
            next_first = range.first + range.count;
            last_unit = at.unit;
          }
          for (int i = range.first; i < range.first + range.count; ++i) ++walked[at.unit][i];
        }
        for (const std::vector<int>& unit : walked) {
          for (int count : unit) ASSERT_EQ(count, 1);
        }
      }
    }
  }
}

}  // namespace
}  // namespace swr::attention
