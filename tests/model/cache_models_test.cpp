// The two cache models: whole-tile LRU and address-level sector/line LRU.
#include <gtest/gtest.h>

#include "model/cache_models.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

// Misses of `passes` passes over `tiles` tiles of `weight` sectors, reversing on odd passes when
// `sawtooth`.
std::int64_t tile_pass_misses(std::int64_t capacity, int tiles, int weight, int passes,
                              bool sawtooth) {
  TileLruCache cache(capacity, tiles);
  std::int64_t misses = 0;
  for (int pass = 0; pass < passes; ++pass) {
    for (int i = 0; i < tiles; ++i) {
      const int tile = sawtooth && pass % 2 ? tiles - 1 - i : i;
      if (!cache.access(tile, weight)) misses += weight;
    }
  }
  return misses;
}

TEST(TileLruCache, FitsThenThrashesCyclically) {
  // 10 tiles of 4 sectors: 40 sectors.
  EXPECT_EQ(tile_pass_misses(40, 10, 4, 3, false), 40);   // fits: cold misses only
  EXPECT_EQ(tile_pass_misses(39, 10, 4, 3, false), 120);  // one sector short: every read misses
}

TEST(TileLruCache, SawtoothReusesWhatFits) {
  // 36 sectors hold 9 of the 10 tiles: each reversal re-reads 9 tiles from the cache.
  EXPECT_EQ(tile_pass_misses(36, 10, 4, 3, true), 40 + 4 + 4);
}

TEST(TileLruCache, EvictsWholeTilesByWeight) {
  TileLruCache cache(10, 4);
  EXPECT_FALSE(cache.access(0, 6));
  EXPECT_FALSE(cache.access(1, 3));
  EXPECT_TRUE(cache.resident(0));
  EXPECT_FALSE(cache.access(2, 2));  // 11 > 10: tile 0, the least recent, goes
  EXPECT_FALSE(cache.resident(0));
  EXPECT_TRUE(cache.resident(1));
  EXPECT_EQ(cache.resident_sectors(), 5);
  EXPECT_FALSE(cache.access(3, 11));  // larger than the cache: never stays
  EXPECT_FALSE(cache.resident(3));
  EXPECT_TRUE(cache.access(1, 3));
}

TEST(LruSectorCache, SectorGranularityMatchesTheTileModel) {
  // The same passes, one sector at a time: 10 tiles of 4 sectors of 32 bytes.
  for (std::int64_t capacity_sectors : {40, 39, 36}) {
    for (bool sawtooth : {false, true}) {
      LruSectorCache cache({capacity_sectors * 32, 32, 32, 0});
      std::int64_t misses = 0;
      for (int pass = 0; pass < 3; ++pass) {
        for (int i = 0; i < 10; ++i) {
          const int tile = sawtooth && pass % 2 ? 9 - i : i;
          for (int sector = 0; sector < 4; ++sector) {
            misses += cache.access(static_cast<std::uint64_t>(tile * 4 + sector) * 32) ? 0 : 1;
          }
        }
      }
      EXPECT_EQ(misses, tile_pass_misses(capacity_sectors, 10, 4, 3, sawtooth))
          << capacity_sectors << (sawtooth ? " sawtooth" : " cyclic");
    }
  }
}

TEST(LruSectorCache, LinesAllocateWholeButFillBySector) {
  LruSectorCache cache({256, 32, 128, 0});  // two 128-byte lines
  EXPECT_FALSE(cache.access(0));
  EXPECT_FALSE(cache.access(32));  // same line, sector not yet valid
  EXPECT_TRUE(cache.access(0));
  EXPECT_FALSE(cache.access(128));
  EXPECT_FALSE(cache.access(256));  // third line evicts line 0 with both its sectors
  EXPECT_FALSE(cache.access(32));
}

TEST(LruSectorCache, SetAssociativityAddsConflictMisses) {
  // 64 lines as 2-way sets: a working set of 48 lines fits fully associatively, not in 2-way sets
  // (some of the 32 hashed sets get 3 or more lines).
  const auto misses = [](int ways) {
    LruSectorCache cache({64 * 32, 32, 32, ways});
    std::int64_t count = 0;
    for (int pass = 0; pass < 4; ++pass) {
      for (int line = 0; line < 48; ++line) count += cache.access(line * 32ULL) ? 0 : 1;
    }
    return count;
  };
  EXPECT_EQ(misses(0), 48);
  EXPECT_GT(misses(2), 48);
}

TEST(LruSectorCache, RefusesGeometriesThatDoNotDivide) {
  EXPECT_THROW(LruSectorCache({100, 32, 32, 0}), UsageError);
  EXPECT_THROW(LruSectorCache({1024, 32, 48, 0}), UsageError);
  EXPECT_THROW(LruSectorCache({1024, 32, 32, 3}), UsageError);
  EXPECT_THROW(LruSectorCache({0, 32, 32, 0}), UsageError);
}

}  // namespace
}  // namespace swr::model
