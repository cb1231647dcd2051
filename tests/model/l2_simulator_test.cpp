// The schedule simulator: agrees with the closed form and the exact sector replay, and predicts
// the paper's sawtooth effect on GB10 exactly where K/V outgrows the L2.
#include "model/l2_simulator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "model_test_support.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

using testing::attention_config;
using testing::attention_problem;

constexpr Persistence kPersistences[] = {Persistence::grid, Persistence::static_loop,
                                         Persistence::dynamic};
constexpr TileSwizzle kSwizzles[] = {TileSwizzle::head_major, TileSwizzle::heads_interleaved,
                                     TileSwizzle::head_groups};

TEST(L2Simulator, RequestedSectorsEqualTheClosedForm) {
  const GpuProfile gpu = testing::small_gpu(256 * 1024, 4);
  for (bool causal : {false, true}) {
    AttentionProblem problem = attention_problem(2, 3, 1000, 64, causal);
    problem.seq_kv = 1300;
    for (Persistence persistence : kPersistences) {
      for (TileSwizzle swizzle : kSwizzles) {
        for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
          const AttentionConfig config =
              attention_config(128, 64, 8, order, persistence, swizzle, 4);
          const SimulationResult result = simulate_l2(problem, config, gpu);
          EXPECT_EQ(result.requested, closed_form_traffic(problem, config, gpu).requested);
          EXPECT_FALSE(result.sampled);
          EXPECT_EQ(result.kv_steps_simulated, result.kv_steps_total);
          EXPECT_GE(result.misses.total(), result.compulsory.total()) << config.key();
          EXPECT_LE(result.misses.total(), result.requested.total()) << config.key();
        }
      }
    }
  }
}

// GQA/MQA: the query heads of one K/V head read the same K/V, which the replay keys by K/V head.
// With an L2 that holds everything, the simulator's counts are the closed form's exactly: every
// query head's reads requested, each K/V head's rows missed once, for both causal alignments.
TEST(L2Simulator, GroupedQueryCountsEqualTheClosedFormOnSmallCases) {
  const GpuProfile roomy = testing::small_gpu(64 * 1024 * 1024, 4);
  const GpuProfile partitioned = testing::small_gpu(64 * 1024 * 1024, 4, 2, 1.0);
  const std::pair<int, int> head_counts[] = {{4, 1}, {4, 2}, {6, 3}, {3, 3}};
  for (const GpuProfile* gpu : {&roomy, &partitioned}) {
    for (const auto& [heads, kv_heads] : head_counts) {
      for (bool causal : {false, true}) {
        for (CausalAlignment align : {CausalAlignment::top_left, CausalAlignment::bottom_right}) {
          if (!causal && align == CausalAlignment::bottom_right) continue;
          for (const auto& [seq_q, seq_kv] : {std::pair{200, 333}, std::pair{300, 130}}) {
            AttentionProblem problem = attention_problem(2, heads, seq_q, 64, causal);
            problem.seq_kv = seq_kv;
            problem.kv_heads = kv_heads;
            problem.causal_align = align;
            for (Persistence persistence : kPersistences) {
              for (TileSwizzle swizzle : kSwizzles) {
                const AttentionConfig config = attention_config(
                    64, 64, 4, KvOrder::sawtooth, persistence, swizzle, heads / kv_heads);
                const ClosedFormTraffic closed = closed_form_traffic(problem, config, *gpu);
                const SimulationResult result = simulate_l2(problem, config, *gpu);
                const std::string label = problem.key() + " " + config.key();
                EXPECT_EQ(result.requested, closed.requested) << label;
                EXPECT_EQ(result.misses, closed.compulsory) << label;
                EXPECT_EQ(result.dram_bytes_read, closed.compulsory.reads() * 32) << label;
                // Each K/V head's rows once, however many query heads read them.
                const std::int64_t per_row = 64 * 2 / 32;
                if (!causal) {
                  EXPECT_EQ(closed.compulsory.k, 2LL * kv_heads * seq_kv * per_row) << label;
                }
              }
            }
          }
        }
      }
    }
  }
}

// The grouping that matters for GQA: the query heads of one K/V head scheduled together, in
// groups whose K/V fits the L2 (head_groups of the ratio, what the space offers when one K/V head
// fills the usable L2). Interleaving every head instead keeps the K/V of every K/V head in flight
// and streams it again in each round; the group reads its K/V head from the L2 after the first
// pass. (Against head_major, which also keeps consecutive query heads, hence one K/V head,
// together, the lock-step replay predicts no difference.) The sector replay agrees.
TEST(L2Simulator, GroupingTheQueryHeadsOfAKvHeadKeepsItsKvInTheL2) {
  // A round of the 16 CTAs reads its Q tiles (128 KiB), one K/V head's K and V (256 KiB) and
  // writes its O tiles (128 KiB): 512 KiB, which 640 KiB hold; with both K/V heads, 768 KiB.
  const GpuProfile gpu = testing::small_gpu(640 * 1024, 8);
  AttentionProblem problem = attention_problem(1, 8, 1024, 64, false);
  problem.kv_heads = 2;
  const AttentionConfig interleaved = attention_config(
      64, 64, 4, KvOrder::cyclic, Persistence::static_loop, TileSwizzle::heads_interleaved);
  const AttentionConfig grouped = attention_config(
      64, 64, 4, KvOrder::cyclic, Persistence::static_loop, TileSwizzle::head_groups, 4);
  const SimulationResult spread = simulate_l2(problem, interleaved, gpu);
  const SimulationResult together = simulate_l2(problem, grouped, gpu);
  const std::int64_t spread_kv = spread.misses.k + spread.misses.v;
  const std::int64_t together_kv = together.misses.k + together.misses.v;
  const std::int64_t compulsory_kv = together.compulsory.k + together.compulsory.v;
  EXPECT_GT(spread_kv, 3 * compulsory_kv);
  EXPECT_LT(together_kv, spread_kv / 3) << spread_kv << " vs " << together_kv;
  EXPECT_LE(together_kv, compulsory_kv * 5 / 4);
  SimulationOptions sectors;
  sectors.granularity = CacheGranularity::sector;
  EXPECT_EQ(simulate_l2(problem, grouped, gpu, sectors).misses, together.misses);
  EXPECT_EQ(simulate_l2(problem, interleaved, gpu, sectors).misses, spread.misses);
}

TEST(L2Simulator, MissesAreColdWhenEverythingFits) {
  // GB10, B=8, D=64, S=16K: all of Q, K, V, O is 32 MiB, but a wave reads one or two heads'
  // K/V (4 MiB each) at a time: only cold misses, in every mode.
  const GpuProfile gb10 = testing::builtin("gb10");
  const AttentionProblem problem = attention_problem(8, 1, 16384, 64, false);
  for (Persistence persistence : kPersistences) {
    for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
      const SimulationResult result =
          simulate_l2(problem, attention_config(64, 64, 4, order, persistence), gb10);
      EXPECT_EQ(result.misses, result.compulsory) << to_string(persistence);
      EXPECT_EQ(result.dram_bytes_read, result.compulsory.reads() * 32);
      EXPECT_EQ(result.dram_bytes_written, result.compulsory.o * 32);
    }
  }
}

TEST(L2Simulator, PartitionedL2CountsFirstTouchesByTheProfileAndReadsDramOnce) {
  // H200: K/V reads of a wave that spans both partitions miss in both at once. The attention
  // sweep counted those first touches once (the profile's l2_first_touch_miss_factor, 1.0); a bare
  // streaming kernel counts them 1.43 times (the override). Q and O belong to one CTA each, and
  // DRAM reads every byte once either way.
  const GpuProfile h200 = testing::builtin("h200");
  const AttentionProblem problem = attention_problem(4, 1, 16384, 128, false);
  const AttentionConfig config =
      attention_config(128, 64, 8, KvOrder::cyclic, Persistence::static_loop);
  for (const double first_touch : {1.0, 1.43}) {
    SimulationOptions options;
    options.first_touch_miss_factor = first_touch;
    const SimulationResult result = simulate_l2(problem, config, h200, options);
    EXPECT_EQ(result.partitions, 2);
    EXPECT_EQ(result.misses.q, result.compulsory.q);
    EXPECT_EQ(result.misses.o, result.compulsory.o);
    EXPECT_NEAR(static_cast<double>(result.misses.k), first_touch * result.compulsory.k,
                0.01 * result.compulsory.k)
        << "first-touch factor " << first_touch;
    EXPECT_EQ(result.dram_bytes_read, result.compulsory.reads() * 32);
  }
  // The profile's own value is the attention one.
  const SimulationResult profile = simulate_l2(problem, config, h200);
  EXPECT_NEAR(static_cast<double>(profile.misses.k), profile.compulsory.k,
              0.01 * profile.compulsory.k);
}

// A partition that fetches a tile the other partition holds (not in the same tick) gets it over
// the crossbar: l2_peer_fill_miss_weight counted misses per sector, and no DRAM read.
TEST(L2Simulator, PeerFillsCountTheProfileWeightAndReadNoDram) {
  GpuProfile gpu = testing::small_gpu(512 * 1024, 4, 2, 1.43);
  // Two CTAs, one per partition, the second starting a step late (skew): it reads every K/V
  // tile after the first partition fetched it.
  const AttentionProblem problem = attention_problem(1, 1, 128, 64, false);
  const AttentionConfig config =
      attention_config(64, 64, 4, KvOrder::cyclic, Persistence::static_loop);
  SimulationOptions options;
  options.wave_size = 2;
  options.progress.skew_steps = 2;
  std::vector<double> kv_misses;
  for (const double weight : {0.0, 0.5, 1.0}) {
    gpu.l2_peer_fill_miss_weight = weight;
    const SimulationResult result = simulate_l2(problem, config, gpu, options);
    EXPECT_EQ(result.dram_bytes_read, result.compulsory.reads() * 32) << weight;
    kv_misses.push_back(static_cast<double>(result.misses.k + result.misses.v));
  }
  const double compulsory_kv = kv_misses[0];
  EXPECT_GT(compulsory_kv, 0);
  EXPECT_NEAR(kv_misses[1], 1.5 * compulsory_kv, 1.0);
  EXPECT_NEAR(kv_misses[2], 2.0 * compulsory_kv, 1.0);
}

// The tile model is exact: whole-tile LRU gives the same misses as replaying every sector (and
// every 128-byte line, since tiles are whole lines), in thrashing configurations of every mode.
TEST(L2Simulator, TileGranularityEqualsSectorReplay) {
  const GpuProfile gpu = testing::small_gpu(256 * 1024, 4);
  const GpuProfile partitioned = testing::small_gpu(512 * 1024, 4, 2, 1.43);
  int thrashing = 0;
  for (const GpuProfile* profile : {&gpu, &partitioned}) {
    for (bool causal : {false, true}) {
      // K/V per head = 2 * 1024 * 128 B = 256 KiB: with the Q and O tiles of the wave it
      // overflows 256 KiB (per partition).
      const AttentionProblem problem = attention_problem(3, 1, 1024, 64, causal);
      for (Persistence persistence : kPersistences) {
        for (TileSwizzle swizzle : {TileSwizzle::head_major, TileSwizzle::heads_interleaved}) {
          for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
            for (int skew : {0, 5}) {
              const AttentionConfig config =
                  attention_config(64, 64, 4, order, persistence, swizzle);
              SimulationOptions options;
              options.progress.skew_steps = skew;
              const SimulationResult tile = simulate_l2(problem, config, *profile, options);
              options.granularity = CacheGranularity::sector;
              const SimulationResult sector = simulate_l2(problem, config, *profile, options);
              options.granularity = CacheGranularity::line;
              const SimulationResult line = simulate_l2(problem, config, *profile, options);
              const std::string label = config.key() + (causal ? " causal" : "") + " skew " +
                                        std::to_string(skew) + " on " +
                                        std::to_string(profile->l2_partitions) + " partitions";
              EXPECT_EQ(tile.misses, sector.misses) << label;
              EXPECT_EQ(tile.misses, line.misses) << label;
              EXPECT_EQ(tile.dram_bytes_read, sector.dram_bytes_read) << label;
              if (tile.misses.total() > tile.compulsory.total() * 3 / 2) ++thrashing;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(thrashing, 20);  // the comparison covered thrashing cases, not only cold ones
}

TEST(L2Simulator, SetAssociativeReplayStaysWithinBounds) {
  const GpuProfile gpu = testing::small_gpu(512 * 1024, 4);
  const AttentionProblem problem = attention_problem(2, 1, 1536, 64, false);
  SimulationOptions options;
  options.granularity = CacheGranularity::line;
  options.ways = 16;
  const SimulationResult result =
      simulate_l2(problem, attention_config(64, 64, 4, KvOrder::sawtooth, Persistence::static_loop),
                  gpu, options);
  EXPECT_GE(result.misses.total(), result.compulsory.total());
  EXPECT_LE(result.misses.total(), result.requested.total());
  EXPECT_NE(result.note.find("16-way"), std::string::npos) << result.note;
}

// Issue 5's acceptance check, the paper's setting: GB10, B=8, H=1, D=64, fp16, non-causal,
// 64x64 tiles, static persistence.
struct Twins {
  SimulationResult cyclic;
  SimulationResult sawtooth;
};

Twins gb10_twins(int seq) {
  const GpuProfile gb10 = testing::builtin("gb10");
  const AttentionProblem problem = attention_problem(8, 1, seq, 64, false);
  Twins twins;
  twins.cyclic = simulate_l2(
      problem, attention_config(64, 64, 4, KvOrder::cyclic, Persistence::static_loop), gb10);
  twins.sawtooth = simulate_l2(
      problem, attention_config(64, 64, 4, KvOrder::sawtooth, Persistence::static_loop), gb10);
  EXPECT_FALSE(twins.cyclic.sampled);
  EXPECT_FALSE(twins.sawtooth.sampled);
  return twins;
}

TEST(L2Simulator, GB10SawtoothMakesNoDifferenceWhileKvFits) {
  const Twins twins = gb10_twins(32768);  // K/V per head 8 MiB, L2 24 MiB
  const double cyclic = static_cast<double>(twins.cyclic.misses.total());
  const double sawtooth = static_cast<double>(twins.sawtooth.misses.total());
  EXPECT_LE(std::abs(cyclic - sawtooth) / cyclic, 0.01);
  EXPECT_EQ(twins.cyclic.misses, twins.cyclic.compulsory);
}

TEST(L2Simulator, GB10SawtoothHalvesTheMissesOnceKvExceedsTheL2) {
  const Twins twins = gb10_twins(131072);  // K/V per head 32 MiB
  const double cyclic = static_cast<double>(twins.cyclic.misses.total());
  const double sawtooth = static_cast<double>(twins.sawtooth.misses.total());
  const double compulsory = static_cast<double>(twins.cyclic.compulsory.total());
  EXPECT_GT(cyclic, 2 * compulsory);
  EXPECT_LE(sawtooth, 0.5 * cyclic);                              // total misses
  EXPECT_LE(sawtooth - compulsory, 0.5 * (cyclic - compulsory));  // non-compulsory misses
  EXPECT_GT(twins.sawtooth.hit_rate, twins.cyclic.hit_rate);
  EXPECT_LT(twins.sawtooth.dram_bytes_read, twins.cyclic.dram_bytes_read / 2);
}

// A sampled replay sees only the first heads: with half of the K/V steps it lands within 2% of the
// full replay, with a fifth (about 0.8 of the 4 heads: no head boundary, where a wave straddles two
// heads) within 10%.
TEST(L2Simulator, SamplingExtrapolatesCloseToTheFullReplay) {
  const GpuProfile gb10 = testing::builtin("gb10");
  const AttentionProblem problem = attention_problem(4, 1, 131072, 64, false);
  for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
    const AttentionConfig config = attention_config(64, 64, 4, order, Persistence::static_loop);
    const SimulationResult full = simulate_l2(problem, config, gb10);
    EXPECT_FALSE(full.sampled);
    const double exact = static_cast<double>(full.misses.total());
    for (const auto& [share, tolerance] : {std::pair{2, 0.02}, std::pair{5, 0.10}}) {
      SimulationOptions options;
      options.max_kv_steps = full.kv_steps_total / share;
      const SimulationResult sampled = simulate_l2(problem, config, gb10, options);
      EXPECT_TRUE(sampled.sampled);
      EXPECT_NE(sampled.note.find("sampled"), std::string::npos) << sampled.note;
      EXPECT_EQ(sampled.note.find("lower bound"), std::string::npos) << sampled.note;
      EXPECT_EQ(sampled.requested, full.requested);
      EXPECT_LT(std::abs(static_cast<double>(sampled.misses.total()) - exact) / exact, tolerance)
          << to_string(order) << " sampling 1/" << share;
    }
  }
}

TEST(L2Simulator, HugeProblemsAreSampledNotHung) {
  // 2^31 / 64 rows of causal attention would be 10^12 K/V steps: the budget stops it.
  const GpuProfile gb10 = testing::builtin("gb10");
  const AttentionProblem problem = attention_problem(1, 1, 1 << 24, 64, true);
  SimulationOptions options;
  options.max_kv_steps = 2'000'000;
  const SimulationResult result = simulate_l2(
      problem, attention_config(64, 64, 4, KvOrder::sawtooth, Persistence::dynamic), gb10, options);
  EXPECT_TRUE(result.sampled);
  EXPECT_LT(result.kv_steps_simulated, result.kv_steps_total / 1000);
  EXPECT_GE(result.misses.total(), result.compulsory.total());
  // No CTA got past its first Q tile: the sample saw no re-reads across Q tiles, and says so.
  EXPECT_NE(result.note.find("lower bound"), std::string::npos) << result.note;
}

TEST(L2Simulator, RefusesOptionsOutOfRange) {
  const GpuProfile gb10 = testing::builtin("gb10");
  const AttentionProblem problem = attention_problem(1, 1, 4096, 64, false);
  const AttentionConfig config = attention_config(64, 64, 4, KvOrder::cyclic, Persistence::grid);
  SimulationOptions skew;
  skew.progress.skew_steps = 2'000'000'000;  // would replay billions of empty ticks
  EXPECT_THROW(simulate_l2(problem, config, gb10, skew), UsageError);
  SimulationOptions wave;
  wave.wave_size = -3;
  EXPECT_THROW(simulate_l2(problem, config, gb10, wave), UsageError);
  SimulationOptions steps;
  steps.max_kv_steps = 0;
  try {
    simulate_l2(problem, config, gb10, steps);
    ADD_FAILURE() << "accepted max_kv_steps 0";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("max_kv_steps 0"), std::string::npos);
  }
}

TEST(L2Simulator, TilesLargerThanTheSequenceReadOnlyValidRows) {
  const GpuProfile gb10 = testing::builtin("gb10");
  const AttentionProblem problem = attention_problem(1, 1, 100, 64, false);
  const SimulationResult result =
      simulate_l2(problem, attention_config(128, 128, 8, KvOrder::cyclic, Persistence::grid), gb10);
  EXPECT_EQ(result.requested.total(), 4 * 100 * 4);
  EXPECT_EQ(result.misses, result.compulsory);
  EXPECT_NE(result.note.find("exceeds the sequence"), std::string::npos) << result.note;
}

}  // namespace
}  // namespace swr::model
