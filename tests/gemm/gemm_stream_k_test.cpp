// The stream-K schedule (templates/gemm/stream_k.cuh, the kernel's own functions): every k block
// of every tile computed exactly once, whole tiles first and in static order, each split tile
// stored by exactly one finisher that holds its k block 0, every contributor's part its first
// stream-K item and its only one (one scratch slot per unit), and the scratch the launcher sizes.
#include <gtest/gtest.h>

#include <vector>

#include "generator/gemm_swizzle.hpp"
#include "templates/gemm/stream_k.cuh"

namespace swr {
namespace {

using gemm::StreamKFixup;
using gemm::StreamKItem;
using gemm::StreamKSchedule;

void expect_schedule_covers(int tiles, int units, int k_blocks) {
  const StreamKSchedule s = gemm::stream_k_schedule(tiles, units, k_blocks);
  SCOPED_TRACE(testing::Message() << tiles << " tiles, " << units << " units, " << k_blocks
                                  << " k blocks");
  std::vector<int> computed(static_cast<std::size_t>(tiles) * k_blocks, 0);
  std::vector<int> stored(static_cast<std::size_t>(tiles), 0);
  std::vector<int> contributors(static_cast<std::size_t>(tiles), 0);
  std::vector<int> expected_contributors(static_cast<std::size_t>(tiles), 0);
  for (int unit = 0; unit < units; ++unit) {
    int partial_items = 0;
    int whole_seen = 0;
    StreamKItem item;
    const gemm::StreamKRange range = gemm::stream_k_range(s, unit);
    for (int j = 0; gemm::stream_k_item(s, range, unit, j, item); ++j) {
      const StreamKFixup fixup = gemm::stream_k_fixup(range, item, unit);
      ASSERT_LT(j, tiles + 2) << "unit " << unit << " never ends";
      ASSERT_GE(item.tile, 0);
      ASSERT_LT(item.tile, tiles);
      ASSERT_LT(item.k_begin, item.k_end);
      ASSERT_LE(item.k_end, k_blocks);
      for (int kb = item.k_begin; kb < item.k_end; ++kb)
        ++computed[static_cast<std::size_t>(item.tile) * k_blocks + kb];
      if (item.tile < s.whole_tiles) {
        EXPECT_EQ(item.tile, unit + whole_seen * units) << "whole tiles in static order";
        EXPECT_EQ(item.k_end - item.k_begin, k_blocks);
        EXPECT_FALSE(fixup.contributor);
        ++whole_seen;
      } else {
        EXPECT_EQ(whole_seen, s.whole_tiles / units) << "whole tiles come first";
      }
      EXPECT_LE(fixup.finisher, fixup.last_unit);
      EXPECT_TRUE(unit >= fixup.finisher && unit <= fixup.last_unit);
      if (fixup.contributor) {
        EXPECT_NE(item.k_begin, 0) << "the finisher holds k block 0";
        EXPECT_EQ(j, s.whole_tiles / units) << "a contributor item is the unit's first split one";
        ++partial_items;
        ++contributors[static_cast<std::size_t>(item.tile)];
      } else {
        EXPECT_EQ(item.k_begin, 0);
        EXPECT_EQ(fixup.finisher, unit);
        ++stored[static_cast<std::size_t>(item.tile)];
        expected_contributors[static_cast<std::size_t>(item.tile)] =
            fixup.last_unit - fixup.finisher;
      }
    }
    EXPECT_LE(partial_items, 1) << "one scratch slot per unit";
  }
  for (int tile = 0; tile < tiles; ++tile) {
    EXPECT_EQ(stored[static_cast<std::size_t>(tile)], 1) << "tile " << tile;
    EXPECT_EQ(contributors[static_cast<std::size_t>(tile)],
              expected_contributors[static_cast<std::size_t>(tile)])
        << "the finisher waits for exactly the units that wrote a part of tile " << tile;
    for (int kb = 0; kb < k_blocks; ++kb)
      ASSERT_EQ(computed[static_cast<std::size_t>(tile) * k_blocks + kb], 1)
          << "tile " << tile << " k block " << kb;
  }
}

TEST(GemmStreamK, EveryKBlockOfEveryTileExactlyOnce) {
  for (int units : {1, 2, 3, 7, 66, 132})
    for (int tiles = 1; tiles <= 3 * units + 5; tiles += (units > 10 ? 7 : 1))
      for (int k_blocks : {1, 2, 3, 5, 16, 110}) expect_schedule_covers(tiles, units, k_blocks);
}

TEST(GemmStreamK, TheRaggedShapeSplitsItsLastWave) {
  // 5000x3000 in 128x256 tiles on 2x1 clusters: 20 x 12 = 240 cluster tiles on 66 clusters,
  // k 7000 = 110 blocks: 198 whole tiles, 42 split over 66 units (70 k blocks each).
  const StreamKSchedule s = gemm::stream_k_schedule(240, 66, 110);
  EXPECT_EQ(s.whole_tiles, 198);
  EXPECT_EQ(s.k_total, 42 * 110);
  EXPECT_EQ(gemm::stream_k_range_begin(s, 1), 70);
  expect_schedule_covers(240, 66, 110);
  // No partial wave: static.
  EXPECT_EQ(gemm::stream_k_schedule(264, 132, 64).k_total, 0);
  expect_schedule_covers(264, 132, 64);
}

TEST(GemmStreamK, ScratchIsFlagsThenOnePartialTilePerCta) {
  GemmConfig config;
  config.path = InstructionPath::wgmma;
  config.block_m = 128;
  config.block_n = 256;
  config.persistence = GemmPersistence::static_loop;
  EXPECT_EQ(gemm_stream_k_scratch(config, 132).bytes, 0u);
  config.persistence = GemmPersistence::stream_k;
  const GemmStreamKScratch scratch = gemm_stream_k_scratch(config, 131);
  EXPECT_EQ(scratch.flag_ints, 264) << "2 x 131 rounded up to whole 16-byte units";
  EXPECT_EQ(scratch.bytes, 264u * 4 + 131u * 128 * 256 * 4);
}

}  // namespace
}  // namespace swr
