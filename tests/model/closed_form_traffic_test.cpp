// The paper's §3.2-3.3 numbers from the closed form, and the exact counting of partial tiles.
#include "model/closed_form_traffic.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "model/l2_simulator.hpp"
#include "model/model_profile.hpp"
#include "model_test_support.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

using testing::attention_problem;

constexpr std::int64_t kMiB = 1024 * 1024;

// Paper: B = H = 1, D = 64, fp16, 32-byte sectors, square tiles of T rows.
ClosedFormTraffic paper_case(int seq, int tile, bool causal) {
  return closed_form_traffic(attention_problem(1, 1, seq, 64, causal), TileShape{tile, tile}, 32);
}

TEST(ClosedFormTraffic, NonCausalIsExactlyEightSTimesOnePlusSOverT) {
  // S a multiple of T: no trailing tile, the formula is exact.
  for (int tile : {64, 80, 128}) {
    const int seq = tile * 1024;
    const double paper = paper_sector_estimate(seq, 64, 2, 32, tile, false);
    EXPECT_DOUBLE_EQ(paper, 8.0 * seq * (1.0 + static_cast<double>(seq) / tile));
    EXPECT_EQ(static_cast<double>(paper_case(seq, tile, false).requested.total()), paper) << tile;
  }
}

TEST(ClosedFormTraffic, NonCausalTrailingTileWithinTOverS) {
  // 32768 / 80 = 409.6: 410 Q tiles each read all 32768 K/V rows. The paper's direct division
  // undercounts the trailing tile by less than one tile row per Q tile: relative error <= T/S.
  const int seq = 32768;
  const double exact = static_cast<double>(paper_case(seq, 80, false).requested.total());
  const double paper = paper_sector_estimate(seq, 64, 2, 32, 80, false);
  EXPECT_GT(exact, paper);
  EXPECT_LE((exact - paper) / paper, 80.0 / seq);
  // Exactly: Q + O = 8S, K + V = 8S * ceil(S/T).
  EXPECT_EQ(exact, 8.0 * seq + 8.0 * seq * 410);
}

TEST(ClosedFormTraffic, CausalMatchesThePaperWithinFourTOverS) {
  // Exact, S a multiple of T: K + V rows = T n(n+1)/2 each, n = S/T, so M = 8S(S/(2T) + 3/2); the
  // paper's 8S(S/(2T) + 1/2) is 8S less: a relative 2T/S.
  for (int seq : {32768, 65536, 131072}) {
    const int tile = 64;
    const double exact = static_cast<double>(paper_case(seq, tile, true).requested.total());
    EXPECT_DOUBLE_EQ(exact, 8.0 * seq * (seq / (2.0 * tile) + 1.5)) << seq;
    const double paper = paper_sector_estimate(seq, 64, 2, 32, tile, true);
    EXPECT_DOUBLE_EQ(paper, 8.0 * seq * (seq / (2.0 * tile) + 0.5));
    EXPECT_LE(std::abs(exact - paper) / paper, 2.0 * tile / seq) << seq;
  }
  // T = 80, the paper's tile, S not a multiple of it: the trailing tile (a fraction d < 1 of a
  // tile) adds 8S*d more, so the exact count is 8S(S/(2T) + 3/2 + d): within 4T/S (1% at 32K).
  for (int seq : {32768, 131072}) {
    const double exact = static_cast<double>(paper_case(seq, 80, true).requested.total());
    const double paper = paper_sector_estimate(seq, 64, 2, 32, 80, true);
    EXPECT_GT(std::abs(exact - paper) / paper, 2.0 * 80 / seq) << seq;
    EXPECT_LE(std::abs(exact - paper) / paper, 4.0 * 80 / seq) << seq;
  }
}

TEST(ClosedFormTraffic, ColdMissesAreSixteenS) {
  for (int seq : {16384, 80000, 131072}) {
    for (bool causal : {false, true}) {
      EXPECT_EQ(paper_case(seq, 80, causal).compulsory.total(), 16LL * seq) << seq;
    }
  }
}

TEST(ClosedFormTraffic, ScalesWithBatchHeadsHeadDimAndSector) {
  const ClosedFormTraffic one = paper_case(8192, 64, false);
  const ClosedFormTraffic many =
      closed_form_traffic(attention_problem(4, 2, 8192, 128, false), TileShape{64, 64}, 64);
  // 8 pairs, twice the bytes per row, twice the sector: 8x the sectors.
  EXPECT_EQ(many.requested.total(), 8 * one.requested.total());
  EXPECT_EQ(many.compulsory.total(), 8 * one.compulsory.total());
}

// An independent count: walk every Q tile, find its last valid row, and count the K/V rows of the
// key tiles that row can see. `touched` gets the K/V rows any Q tile reads.
std::int64_t brute_force_kv_rows(int seq_q, int seq_kv, int block_m, int block_n, bool causal,
                                 std::int64_t* touched = nullptr) {
  std::int64_t rows = 0;
  std::int64_t widest = 0;
  for (int first = 0; first < seq_q; first += block_m) {
    const int last_row = std::min(first + block_m, seq_q) - 1;
    int tiles = (seq_kv + block_n - 1) / block_n;
    if (causal) tiles = std::min(tiles, last_row / block_n + 1);
    std::int64_t tile_rows = 0;
    for (int tile = 0; tile < tiles; ++tile) {
      tile_rows += std::min(block_n, seq_kv - tile * block_n);
    }
    rows += tile_rows;
    widest = std::max(widest, tile_rows);
  }
  if (touched) *touched = widest;
  return rows;
}

TEST(ClosedFormTraffic, PartialTilesCountOnlyValidRows) {
  struct Case {
    int seq_q, seq_kv, block_m, block_n;
    bool causal;
  };
  for (const Case& c : {Case{1000, 1000, 64, 64, false}, Case{1000, 1000, 128, 64, true},
                        Case{777, 3001, 64, 128, true}, Case{5000, 300, 128, 64, true},
                        Case{100, 100, 128, 128, false}, Case{4097, 4097, 64, 128, true}}) {
    AttentionProblem problem = attention_problem(2, 3, c.seq_q, 64, c.causal);
    problem.seq_kv = c.seq_kv;
    const ClosedFormTraffic traffic =
        closed_form_traffic(problem, TileShape{c.block_m, c.block_n}, 32);
    const std::int64_t per_row = 64 * 2 / 32;
    EXPECT_EQ(traffic.requested.q, 6LL * c.seq_q * per_row);
    EXPECT_EQ(traffic.requested.o, traffic.requested.q);
    std::int64_t touched = 0;
    EXPECT_EQ(traffic.requested.k,
              6 * brute_force_kv_rows(c.seq_q, c.seq_kv, c.block_m, c.block_n, c.causal, &touched) *
                  per_row)
        << c.seq_q << " " << c.seq_kv << " " << c.block_m << "x" << c.block_n;
    EXPECT_EQ(traffic.requested.v, traffic.requested.k);
    // Cold misses: the keys some query reads (causal with S_kv > S_q leaves the rest unread).
    EXPECT_EQ(traffic.compulsory.k, 6 * touched * per_row);
    EXPECT_EQ(traffic.compulsory.k == 6LL * c.seq_kv * per_row,
              !c.causal || c.seq_kv <= c.seq_q + c.block_m);
  }
}

TEST(ClosedFormTraffic, RefusesBadTilesAndSectors) {
  const AttentionProblem problem = attention_problem(1, 1, 1024, 64, false);
  EXPECT_THROW(closed_form_traffic(problem, TileShape{0, 64}, 32), UsageError);
  EXPECT_THROW(closed_form_traffic(problem, TileShape{64, -1}, 32), UsageError);
  EXPECT_THROW(closed_form_traffic(problem, TileShape{64, 64}, 0), UsageError);
  EXPECT_THROW(closed_form_traffic(problem, TileShape{64, 64}, 48), UsageError);
  try {
    closed_form_traffic(problem, TileShape{0, 64}, 32);
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("block_m 0"), std::string::npos) << error.what();
  }
}

TEST(NonCompulsoryOnset, KvIsTwentyMiBAtEightyK) {
  EXPECT_EQ(attention_problem(1, 1, 80 * 1024, 64, false).kv_bytes_per_head(), 20.0 * kMiB);
}

// Paper §3.3: on GB10 (24 MiB L2, 48 CTAs of one 80x80 tile each) misses leave the cold line at
// about S = 80K, where K/V is 20 MiB. An LRU L2 keeps K/V (256 B per row), 48 Q tiles and 48 O
// tiles (10 KiB each) until they exceed 24 MiB: S = 94,465. The paper read its 80K off a plot
// sampled every 16K; our onset lies between that reading and 96K, where K/V alone fills the L2.
TEST(NonCompulsoryOnset, GB10PaperCaseBetweenEightyAndNinetySixK) {
  OnsetInputs inputs;
  inputs.shape = attention_problem(1, 1, 1, 64, false);
  inputs.block_m = 80;
  inputs.wave_size = 48;
  inputs.usable_l2_bytes = usable_l2_bytes(testing::builtin("gb10"));
  EXPECT_EQ(inputs.usable_l2_bytes, 24 * kMiB);
  const std::optional<std::int64_t> onset = non_compulsory_onset_seq(inputs);
  ASSERT_TRUE(onset.has_value());
  EXPECT_EQ(*onset, 94465);
  EXPECT_GT(*onset, 80 * 1024);
  EXPECT_LE(*onset, 96 * 1024);
}

// The simulator agrees: below the onset the misses are the cold ones, above it they are not.
TEST(NonCompulsoryOnset, SimulatorDivergesFromColdAtTheOnset) {
  const GpuProfile gb10 = testing::builtin("gb10");
  SimulationOptions options;
  options.wave_size = 48;
  const AttentionConfig config =
      testing::attention_config(80, 80, 4, KvOrder::cyclic, Persistence::static_loop);
  const SimulationResult below =
      simulate_l2(attention_problem(1, 1, 92160, 64, false), config, gb10, options);
  EXPECT_EQ(below.misses.total(), below.compulsory.total());
  const SimulationResult above =
      simulate_l2(attention_problem(1, 1, 96000, 64, false), config, gb10, options);
  EXPECT_GT(above.misses.total(), 2 * above.compulsory.total());
}

TEST(NonCompulsoryOnset, HeadsInFlightFollowTheSwizzle) {
  OnsetInputs inputs;
  inputs.shape = attention_problem(8, 4, 1, 64, false);
  inputs.block_m = 64;
  inputs.wave_size = 96;
  // 4096 rows = 64 q tiles per head: a wave of 96 covers 2 heads in head-major order.
  EXPECT_EQ(heads_in_flight(inputs, 4096), 2);
  EXPECT_EQ(heads_in_flight(inputs, 65536), 1);
  inputs.swizzle = TileSwizzle::heads_interleaved;
  EXPECT_EQ(heads_in_flight(inputs, 65536), 32);  // all 32 pairs, fewer than the wave
  inputs.swizzle = TileSwizzle::head_groups;
  inputs.head_group = 4;
  EXPECT_EQ(heads_in_flight(inputs, 65536), 4);
  EXPECT_EQ(heads_in_flight(inputs, 1024), 8);  // 16 q tiles: a wave spans two groups
  // Onset for the GB10 acceptance case (B=8, H=1, 64x64, 96 CTAs): one head at a time.
  inputs.shape = attention_problem(8, 1, 1, 64, false);
  inputs.swizzle = TileSwizzle::head_major;
  inputs.usable_l2_bytes = 24 * kMiB;
  const std::optional<std::int64_t> onset = non_compulsory_onset_seq(inputs);
  ASSERT_TRUE(onset.has_value());
  EXPECT_GT(*onset, 32768);
  EXPECT_LT(*onset, 131072);
}

}  // namespace
}  // namespace swr::model
