// The attention schedule (templates/attention/attention_schedule.cuh, compiled here by the host
// compiler, the code the kernel runs) against brute-force expectations written out independently:
// for every swizzle, head group, causal flag and persistence on small ragged shapes, every tile
// is visited exactly once and in the documented order, every K/V walk is the documented
// permutation, and the model's replay (TileDispenser) follows the same rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "model/schedule_replay.hpp"
#include "templates/attention/attention_args.cuh"
#include "templates/attention/attention_schedule.cuh"

namespace swr {
namespace {

using attention::tile_coord;
using attention::TileCoord;

constexpr attention::TileSwizzle kSwizzles[] = {attention::TileSwizzle::head_major,
                                                attention::TileSwizzle::heads_interleaved,
                                                attention::TileSwizzle::head_groups};

// The order each swizzle documents, spelled out as nested loops.
std::vector<TileCoord> expected_order(attention::TileSwizzle swizzle, int head_group, bool causal,
                                      int q_tiles, int batch_heads) {
  std::vector<TileCoord> order;
  auto push = [&](int batch_head, int q_tile) {
    order.push_back({batch_head, causal ? q_tiles - 1 - q_tile : q_tile});
  };
  if (swizzle == attention::TileSwizzle::head_major) {
    for (int bh = 0; bh < batch_heads; ++bh)
      for (int q = 0; q < q_tiles; ++q) push(bh, q);
  } else if (swizzle == attention::TileSwizzle::heads_interleaved) {
    for (int q = 0; q < q_tiles; ++q)
      for (int bh = 0; bh < batch_heads; ++bh) push(bh, q);
  } else {
    for (int first = 0; first < batch_heads; first += head_group)
      for (int q = 0; q < q_tiles; ++q)
        for (int bh = first; bh < std::min(first + head_group, batch_heads); ++bh) push(bh, q);
  }
  return order;
}

TEST(AttentionSchedule, EveryTileExactlyOnceInTheDocumentedOrder) {
  for (int q_tiles = 1; q_tiles <= 9; ++q_tiles)
    for (int batch_heads = 1; batch_heads <= 11; ++batch_heads)
      for (attention::TileSwizzle swizzle : kSwizzles)
        for (int head_group = 1; head_group <= batch_heads + 1; ++head_group)
          for (bool causal : {false, true}) {
            const std::vector<TileCoord> expected =
                expected_order(swizzle, head_group, causal, q_tiles, batch_heads);
            std::vector<int> visits(static_cast<std::size_t>(q_tiles * batch_heads), 0);
            for (int linear = 0; linear < q_tiles * batch_heads; ++linear) {
              const TileCoord coord =
                  tile_coord(swizzle, head_group, causal, linear, q_tiles, batch_heads);
              ASSERT_EQ(coord.batch_head, expected[linear].batch_head)
                  << "tile " << linear << " swizzle " << static_cast<int>(swizzle) << " group "
                  << head_group << " causal " << causal << " " << q_tiles << "x" << batch_heads;
              ASSERT_EQ(coord.q_tile, expected[linear].q_tile) << "tile " << linear;
              ++visits[static_cast<std::size_t>(coord.batch_head * q_tiles + coord.q_tile)];
            }
            for (int count : visits) ASSERT_EQ(count, 1);
          }
}

TEST(AttentionSchedule, KvWalkIsForwardOrBackwardByRound) {
  for (int kv_tiles = 1; kv_tiles <= 9; ++kv_tiles)
    for (int round = 0; round < 4; ++round)
      for (attention::KvOrder order : {attention::KvOrder::cyclic, attention::KvOrder::sawtooth}) {
        const bool backward = order == attention::KvOrder::sawtooth && round % 2 == 1;
        for (int step = 0; step < kv_tiles; ++step)
          ASSERT_EQ(attention::kv_tile_at(order, step, kv_tiles, round),
                    backward ? kv_tiles - 1 - step : step);
      }
}

TEST(AttentionSchedule, CausalQTileReadsTheKeysOfItsLastRow) {
  for (int block_m : {16, 64, 128})
    for (int block_n : {16, 32, 64})
      for (int seq_q : {1, 15, 64, 100, 257})
        for (int seq_kv : {1, 17, 64, 100, 300})
          // Top-left (0), bottom-right (seq_kv - seq_q, negative when seq_q > seq_kv) and shifts
          // past either end.
          for (int shift : {0, seq_kv - seq_q, -seq_q - 5, seq_kv + 7, 33, -40})
            for (int q_tile = 0; q_tile * block_m < seq_q; ++q_tile) {
              const int all = (seq_kv + block_n - 1) / block_n;
              // Row r < seq_q of the tile sees keys 0..r + shift (none when that is negative): the
              // K/V tiles up to the last row's.
              const int last_row = std::min((q_tile + 1) * block_m, seq_q) - 1;
              const int last_key = last_row + shift;
              const int seen = last_key < 0 ? 0 : std::min(all, last_key / block_n + 1);
              ASSERT_EQ(attention::kv_tiles_of_q_tile(true, q_tile, block_m, block_n, seq_q, seq_kv,
                                                      shift),
                        seen)
                  << block_m << "x" << block_n << " tile " << q_tile << " of " << seq_q << "/"
                  << seq_kv << " shift " << shift;
              if (shift == 0) {
                EXPECT_EQ(
                    attention::kv_tiles_of_q_tile(true, q_tile, block_m, block_n, seq_q, seq_kv),
                    seen);  // the default is top-left
              }
              EXPECT_EQ(attention::kv_tiles_of_q_tile(false, q_tile, block_m, block_n, seq_q,
                                                      seq_kv, shift),
                        all);
              // Later tiles never read fewer K/V tiles: the causal reversal stays longest-first.
              if ((q_tile + 1) * block_m < seq_q) {
                ASSERT_LE(seen, attention::kv_tiles_of_q_tile(true, q_tile + 1, block_m, block_n,
                                                              seq_q, seq_kv, shift));
              }
            }
}

// Query head h reads K/V head h / (heads / kv_heads); the replay maps (batch, head) pairs to
// (batch, K/V head) pairs by the same rule, and head groups of a multiple of the ratio never
// split the query heads of one K/V head.
TEST(AttentionSchedule, GroupedQueryHeadsShareTheirKvHead) {
  for (int heads = 1; heads <= 12; ++heads)
    for (int kv_heads = 1; kv_heads <= heads; ++kv_heads) {
      if (heads % kv_heads != 0) continue;
      const int ratio = heads / kv_heads;
      for (int head = 0; head < heads; ++head) {
        const int kv = attention::kv_head_of(head, heads, kv_heads);
        ASSERT_GE(kv, 0);
        ASSERT_LT(kv, kv_heads);
        ASSERT_EQ(kv * ratio <= head && head < (kv + 1) * ratio, true) << head << "/" << heads;
      }
      AttentionProblem problem;
      problem.batch = 3;
      problem.heads = heads;
      problem.kv_heads = kv_heads;
      problem.seq_q = problem.seq_kv = 100;
      const model::ScheduleShape shape = model::ScheduleShape::of(problem, {64, 64});
      EXPECT_EQ(shape.kv_batch_heads, 3 * kv_heads);
      for (int batch_head = 0; batch_head < shape.batch_heads; ++batch_head) {
        const int batch = batch_head / heads;
        EXPECT_EQ(model::kv_batch_head_of(shape, batch_head),
                  batch * kv_heads + attention::kv_head_of(batch_head % heads, heads, kv_heads));
      }
      // head_groups of k * ratio pairs: each group's pairs read whole K/V heads.
      for (int multiple = 1; multiple <= 3; ++multiple) {
        const int group = multiple * ratio;
        for (int linear = 0; linear < shape.total_tiles; ++linear) {
          const attention::TileCoord coord =
              tile_coord(attention::TileSwizzle::head_groups, group, false, linear, shape.q_tiles,
                         shape.batch_heads);
          const int first_of_group = coord.batch_head / group * group;
          EXPECT_EQ(first_of_group % ratio, 0);
        }
      }
    }
}

// Drives a TileDispenser with slots freeing up in a random order; returns each slot's tiles with
// their rounds, and checks every tile is taken exactly once.
std::vector<std::vector<model::TileAssignment>> replay(Persistence persistence, int total_tiles,
                                                       int wave_size, unsigned seed) {
  model::TileDispenser dispenser(persistence, total_tiles, wave_size);
  std::vector<std::vector<model::TileAssignment>> taken(dispenser.slot_count());
  std::vector<int> live(dispenser.slot_count());
  for (int slot = 0; slot < dispenser.slot_count(); ++slot) live[slot] = slot;
  std::vector<int> visits(static_cast<std::size_t>(total_tiles), 0);
  std::mt19937 random(seed);
  while (!live.empty()) {
    const std::size_t pick = random() % live.size();
    const std::optional<model::TileAssignment> next = dispenser.next(live[pick]);
    if (!next) {
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(pick));
      continue;
    }
    EXPECT_GE(next->linear_tile, 0);
    EXPECT_LT(next->linear_tile, total_tiles);
    ++visits[static_cast<std::size_t>(next->linear_tile)];
    taken[live[pick]].push_back(*next);
  }
  for (int count : visits) EXPECT_EQ(count, 1);
  return taken;
}

TEST(AttentionSchedule, PersistenceRoundsMatchTheRules) {
  for (int total = 1; total <= 40; ++total)
    for (int wave = 1; wave <= 9; ++wave)
      for (unsigned seed : {1u, 2u, 3u}) {
        const int ctas = std::min(total, wave);
        // grid: slot s runs CTAs in blockIdx order; every tile's round is its wave.
        for (const auto& slot : replay(Persistence::grid, total, wave, seed))
          for (const model::TileAssignment& a : slot)
            ASSERT_EQ(a.round, static_cast<int>(a.linear_tile) / wave);
        // static: CTA c takes c, c + ctas, ... in rounds 0, 1, ...
        const auto static_slots = replay(Persistence::static_loop, total, wave, seed);
        for (int cta = 0; cta < ctas; ++cta) {
          std::vector<model::TileAssignment> expected;
          for (int tile = cta; tile < total; tile += ctas)
            expected.push_back({tile, static_cast<int>(expected.size())});
          ASSERT_EQ(static_slots[cta].size(), expected.size());
          for (std::size_t i = 0; i < expected.size(); ++i) {
            ASSERT_EQ(static_slots[cta][i].linear_tile, expected[i].linear_tile);
            ASSERT_EQ(static_slots[cta][i].round, expected[i].round);
          }
        }
        // dynamic: CTA c starts on tile c; later tiles go out in claim order after the first ctas.
        std::vector<long long> claimed;
        const auto dynamic_slots = replay(Persistence::dynamic, total, wave, seed);
        for (int cta = 0; cta < ctas; ++cta) {
          ASSERT_FALSE(dynamic_slots[cta].empty());
          ASSERT_EQ(dynamic_slots[cta][0].linear_tile, cta);
          for (std::size_t i = 0; i < dynamic_slots[cta].size(); ++i) {
            ASSERT_EQ(dynamic_slots[cta][i].round, static_cast<int>(i));
            if (i > 0) {
              ASSERT_GT(dynamic_slots[cta][i].linear_tile, dynamic_slots[cta][i - 1].linear_tile);
              ASSERT_GE(dynamic_slots[cta][i].linear_tile, ctas);
            }
          }
        }
      }
}

TEST(AttentionSchedule, DeviceRuleHelpers) {
  EXPECT_EQ(attention::grid_round(17, 8), 2);
  EXPECT_EQ(attention::static_tile(3, 2, 8), 19);
  EXPECT_EQ(attention::dynamic_claimed_tile(0, 8), 8);  // the counter starts at 0
}

}  // namespace
}  // namespace swr
