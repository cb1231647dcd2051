// The attention backward's schedule (templates/attention/backward/backward_schedule.cuh), built by
// the host compiler: which Q tiles see a K/V tile under every causal alignment, the Q walk
// (cyclic, and sawtooth reversed on odd rounds) over a GQA group's heads, and the kernels' two
// ways of walking it (the division-free BackwardWalk, the warp-specialized producer's counted
// positions), which must visit exactly backward_step_at's steps in its order.
#include <gtest/gtest.h>

#include <set>
#include <utility>

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

}  // namespace
}  // namespace swr::attention
