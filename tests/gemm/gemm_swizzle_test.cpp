// The block swizzle (templates/gemm/block_swizzle.cuh, compiled here by the host compiler): every
// tile visited exactly once for every stride, axis, tile extent and grid shape, ragged bands
// included; the orders are the ones documented; equal order names mean equal orders.
#include "generator/gemm_swizzle.hpp"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "templates/gemm/block_swizzle.cuh"

namespace swr {
namespace {

GemmConfig swizzled(int stride, SwizzleAxis axis, int block_m = 128, int block_n = 128) {
  GemmConfig config;
  config.block_m = block_m;
  config.block_n = block_n;
  config.swizzle_stride = stride;
  config.swizzle_axis = axis;
  return config;
}

// Strides of the paper plus ones that are not multiples of a tile (rounded down to whole tiles)
// or smaller than one (one tile per band).
std::vector<int> strides_to_check() {
  std::vector<int> strides(std::begin(kPaperSwizzleStrides), std::end(kPaperSwizzleStrides));
  for (int odd : {1, 64, 100, 200, 333, 640, 1000, 3000, 100000}) strides.push_back(odd);
  return strides;
}

void expect_permutation(const GemmTileGrid& grid, const SwizzleLaunch& launch) {
  std::vector<int> visits(static_cast<std::size_t>(grid.tiles()), 0);
  for (long long linear = 0; linear < grid.tiles(); ++linear) {
    const HostTileCoord tile = gemm_tile_at(static_cast<int>(linear), grid, launch);
    ASSERT_GE(tile.tile_m, 0);
    ASSERT_LT(tile.tile_m, grid.tiles_m);
    ASSERT_GE(tile.tile_n, 0);
    ASSERT_LT(tile.tile_n, grid.tiles_n);
    ++visits[static_cast<std::size_t>(tile.tile_m) * grid.tiles_n + tile.tile_n];
  }
  for (std::size_t i = 0; i < visits.size(); ++i)
    ASSERT_EQ(visits[i], 1) << "tile " << i << " of " << grid.tiles_m << "x" << grid.tiles_n
                            << " axis " << launch.axis << " group " << launch.group;
}

TEST(GemmSwizzle, EveryTileExactlyOnceForEveryStrideAndGrid) {
  for (int tiles_m = 1; tiles_m <= 17; ++tiles_m)
    for (int tiles_n = 1; tiles_n <= 17; ++tiles_n)
      for (SwizzleAxis axis : {SwizzleAxis::n, SwizzleAxis::m})
        for (int stride : strides_to_check())
          for (int extent : {64, 128, 256}) {
            const SwizzleLaunch launch = swizzle_launch(swizzled(stride, axis, extent, extent));
            expect_permutation({tiles_m, tiles_n}, launch);
          }
}

TEST(GemmSwizzle, EveryTileExactlyOnceOnThePaperSizes) {
  // The sweep's grids (128x128 and 128x256 tiles, 512 .. 16384) and a ragged non-square one.
  for (int size : {512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384})
    for (int block_n : {128, 256})
      for (SwizzleAxis axis : {SwizzleAxis::n, SwizzleAxis::m})
        for (int stride : kPaperSwizzleStrides) {
          GemmConfig config = swizzled(stride, axis, 128, block_n);
          const GemmProblem problem{size, size, size, DataType::f16};
          expect_permutation(gemm_tile_grid(problem, config), swizzle_launch(config));
        }
  GemmConfig config = swizzled(1792, SwizzleAxis::n, 128, 256);
  const GemmProblem ragged{4097, 3000, 64, DataType::f16};
  expect_permutation(gemm_tile_grid(ragged, config), swizzle_launch(config));
}

// The wgmma kernel's persistent scheduler (templates/gemm/sm90/gemm_kernel_ws.cuh): work unit u of
// `units` (a CTA, or a cluster of 2 or 4 CTAs) takes raster tiles u, u + units, ...; CTA r of the
// cluster computes gemm_cluster_member_tile(raster tile, r) (the kernel's own function) and stores
// nothing past the last row or column of tiles. Every output tile must be computed exactly once.
void expect_persistent_schedule_covers(const GemmProblem& problem, const GemmConfig& config,
                                       int units) {
  const GemmTileGrid tiles = gemm_tile_grid(problem, config);
  const GemmTileGrid raster = gemm_raster_grid(problem, config);
  const SwizzleLaunch launch = swizzle_launch(config);
  std::vector<int> visits(static_cast<std::size_t>(tiles.tiles()), 0);
  for (int unit = 0; unit < units; ++unit)
    for (long long linear = unit; linear < raster.tiles(); linear += units) {
      const HostTileCoord cluster_tile = gemm_tile_at(static_cast<int>(linear), raster, launch);
      ASSERT_LT(cluster_tile.tile_m, raster.tiles_m);
      ASSERT_LT(cluster_tile.tile_n, raster.tiles_n);
      for (int rank = 0; rank < config.cluster_size(); ++rank) {
        const HostTileCoord tile = gemm_cluster_member_tile(cluster_tile, config, rank);
        // Past the edge only where the grid is ragged in the cluster's direction.
        ASSERT_LT(tile.tile_m, raster.tiles_m * config.cluster_m);
        ASSERT_LT(tile.tile_n, raster.tiles_n * config.cluster_n);
        if (tile.tile_m >= tiles.tiles_m || tile.tile_n >= tiles.tiles_n) continue;
        ++visits[static_cast<std::size_t>(tile.tile_m) * tiles.tiles_n + tile.tile_n];
      }
    }
  for (std::size_t i = 0; i < visits.size(); ++i)
    ASSERT_EQ(visits[i], 1) << "tile " << i << " of " << tiles.tiles_m << "x" << tiles.tiles_n
                            << " " << config.key() << " units " << units;
}

TEST(GemmSwizzle, PersistentClusterRasterVisitsEveryTileOnceForEveryStrideClusterAndGrid) {
  const std::pair<int, int> clusters[] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}};
  for (const auto& [cluster_m, cluster_n] : clusters)
    for (int tiles_m = 1; tiles_m <= 17; ++tiles_m)
      for (int tiles_n = 1; tiles_n <= 17; ++tiles_n)
        for (SwizzleAxis axis : {SwizzleAxis::n, SwizzleAxis::m})
          for (int stride : strides_to_check()) {
            GemmConfig config = swizzled(stride, axis, 128, 256);
            config.path = InstructionPath::wgmma;
            config.block_k = 64;
            config.persistence = GemmPersistence::static_loop;
            config.cluster_m = cluster_m;
            config.cluster_n = cluster_n;
            // Ragged: the last row and column of tiles are partial.
            const GemmProblem problem{tiles_m * 128 - 5, tiles_n * 256 - 8, 64, DataType::f16};
            for (int units : {1, 3, 32, 33, 66, 132})
              expect_persistent_schedule_covers(problem, config, units);
          }
}

// The widths that are not multiples of 64 (2x2 clusters only) on issue 13's ragged shapes: a
// stride becomes a band of stride / (2 * block_n) cluster columns, rounded down, for every width.
TEST(GemmSwizzle, PersistentRasterOfWidthsThatAreNotMultiplesOf64OnRaggedShapes) {
  const GemmProblem shapes[] = {{3000, 7000, 5000, DataType::bf16},
                                {7000, 3000, 5000, DataType::bf16},
                                {5000, 3000, 7000, DataType::f16},
                                {6000, 5000, 4000, DataType::f16}};
  for (const GemmProblem& problem : shapes)
    for (int block_n : {144, 160, 176, 208, 224, 240})
      for (SwizzleAxis axis : {SwizzleAxis::n, SwizzleAxis::m})
        for (int stride : strides_to_check()) {
          GemmConfig config = swizzled(stride, axis, 128, block_n);
          config.path = InstructionPath::wgmma;
          config.block_k = 64;
          config.persistence = GemmPersistence::static_loop;
          config.cluster_m = 2;
          config.cluster_n = 2;
          for (int units : {1, 7, 30}) expect_persistent_schedule_covers(problem, config, units);
        }
}

TEST(GemmSwizzle, ClusterMembersAreConsecutiveTilesAlongTheClusterAxis) {
  GemmConfig config;
  config.path = InstructionPath::wgmma;
  config.cluster_m = 2;
  EXPECT_EQ(gemm_cluster_member_tile({3, 5}, config, 0), (HostTileCoord{6, 5}));
  EXPECT_EQ(gemm_cluster_member_tile({3, 5}, config, 1), (HostTileCoord{7, 5}));
  config.cluster_m = 1;
  config.cluster_n = 2;
  EXPECT_EQ(gemm_cluster_member_tile({3, 5}, config, 0), (HostTileCoord{3, 10}));
  EXPECT_EQ(gemm_cluster_member_tile({3, 5}, config, 1), (HostTileCoord{3, 11}));
  config.cluster_m = 2;  // 2x2: rank = row + 2 * column
  EXPECT_EQ(gemm_cluster_member_tile({3, 5}, config, 0), (HostTileCoord{6, 10}));
  EXPECT_EQ(gemm_cluster_member_tile({3, 5}, config, 1), (HostTileCoord{7, 10}));
  EXPECT_EQ(gemm_cluster_member_tile({3, 5}, config, 2), (HostTileCoord{6, 11}));
  EXPECT_EQ(gemm_cluster_member_tile({3, 5}, config, 3), (HostTileCoord{7, 11}));
}

// The kernel multicasts CTA r's share of its A tile to cluster_row_mask(r % cluster_m) and of its
// B tile to cluster_column_mask(r / cluster_m), and releases a ring slot to the union (the CTAs
// that write into it). Those must be exactly the CTAs whose tile has r's tile_m (A) or tile_n
// (B), r among them, in every cluster shape; and writing into each other is symmetric, so every
// CTA's empty barrier receives the (cluster_m + cluster_n - 1) releases it counts.
TEST(GemmSwizzle, MulticastMasksAreTheCtasSharingEachOperand) {
  const std::pair<int, int> clusters[] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}};
  for (const auto& [cluster_m, cluster_n] : clusters) {
    GemmConfig config;
    config.path = InstructionPath::wgmma;
    config.cluster_m = cluster_m;
    config.cluster_n = cluster_n;
    const int size = cluster_m * cluster_n;
    std::vector<unsigned> writers(size, 0);
    for (int rank = 0; rank < size; ++rank) {
      const HostTileCoord mine = gemm_cluster_member_tile({4, 7}, config, rank);
      const unsigned rows = gemm::cluster_row_mask(cluster_m, cluster_n, rank % cluster_m);
      const unsigned columns = gemm::cluster_column_mask(cluster_m, rank / cluster_m);
      for (int other = 0; other < 16; ++other) {
        const bool in_cluster = other < size;
        const HostTileCoord theirs =
            in_cluster ? gemm_cluster_member_tile({4, 7}, config, other) : HostTileCoord{-1, -1};
        EXPECT_EQ((rows >> other & 1u) != 0, in_cluster && theirs.tile_m == mine.tile_m)
            << cluster_m << "x" << cluster_n << " rank " << rank << " other " << other;
        EXPECT_EQ((columns >> other & 1u) != 0, in_cluster && theirs.tile_n == mine.tile_n)
            << cluster_m << "x" << cluster_n << " rank " << rank << " other " << other;
      }
      EXPECT_EQ(__builtin_popcount(rows), cluster_n);
      EXPECT_EQ(__builtin_popcount(columns), cluster_m);
      writers[rank] = rows | columns;
    }
    for (int rank = 0; rank < size; ++rank) {
      EXPECT_EQ(__builtin_popcount(writers[rank]), cluster_m + cluster_n - 1);
      for (int other = 0; other < size; ++other)
        EXPECT_EQ(writers[rank] >> other & 1u, writers[other] >> rank & 1u) << "symmetric";
    }
  }
}

TEST(GemmSwizzle, ClusterBandsAlongNAreCountedInClusterTiles) {
  GemmConfig config = swizzled(1024, SwizzleAxis::n, 128, 256);
  config.path = InstructionPath::wgmma;
  EXPECT_EQ(swizzle_launch(config).group, 4);
  config.cluster_n = 2;
  EXPECT_EQ(swizzle_launch(config).group, 2) << "1024 columns = 2 cluster tiles of 2 x 256";
  const GemmTileGrid raster = gemm_raster_grid({1000, 3000, 64, DataType::f16}, config);
  EXPECT_EQ(raster.tiles_m, 8);
  EXPECT_EQ(raster.tiles_n, 6) << "12 tiles of 256 columns (the last partial) in clusters of 2";
}

TEST(GemmSwizzle, ClusterBandsAlongMAreCountedInClusterTiles) {
  GemmConfig config = swizzled(1024, SwizzleAxis::m, 128, 256);
  config.path = InstructionPath::wgmma;
  EXPECT_EQ(swizzle_launch(config).group, 8);
  config.cluster_m = 2;
  EXPECT_EQ(swizzle_launch(config).group, 4) << "1024 rows = 4 cluster tiles of 2 x 128";
  const GemmTileGrid raster = gemm_raster_grid({1000, 512, 64, DataType::f16}, config);
  EXPECT_EQ(raster.tiles_m, 4) << "8 tiles of 128 rows (the last partial) in clusters of 2";
  EXPECT_EQ(raster.tiles_n, 2);
}

TEST(GemmSwizzle, LaunchGroupIsTheStrideInWholeTiles) {
  EXPECT_EQ(swizzle_launch(swizzled(0, SwizzleAxis::n)).group, 0);
  EXPECT_EQ(swizzle_launch(swizzled(1792, SwizzleAxis::n, 128, 64)).group, 28);  // CUDA-L2's
  EXPECT_EQ(swizzle_launch(swizzled(1792, SwizzleAxis::n, 128, 128)).group, 14);
  EXPECT_EQ(swizzle_launch(swizzled(1792, SwizzleAxis::m, 256, 128)).group, 7);
  EXPECT_EQ(swizzle_launch(swizzled(100, SwizzleAxis::n, 128, 128)).group, 1);
  EXPECT_EQ(swizzle_launch(swizzled(512, SwizzleAxis::m)).axis, 1);
  EXPECT_EQ(swizzle_launch(swizzled(512, SwizzleAxis::n)).axis, 0);
}

std::vector<HostTileCoord> coords(std::initializer_list<std::pair<int, int>> pairs) {
  std::vector<HostTileCoord> result;
  for (const auto& [m, n] : pairs) result.push_back({m, n});
  return result;
}

TEST(GemmSwizzle, OrdersAreTheDocumentedOnes) {
  const GemmTileGrid grid{3, 5};
  // Plain row-major: n fastest.
  EXPECT_EQ(gemm_tile_order(grid, {0, 0}), coords({{0, 0},
                                                   {0, 1},
                                                   {0, 2},
                                                   {0, 3},
                                                   {0, 4},
                                                   {1, 0},
                                                   {1, 1},
                                                   {1, 2},
                                                   {1, 3},
                                                   {1, 4},
                                                   {2, 0},
                                                   {2, 1},
                                                   {2, 2},
                                                   {2, 3},
                                                   {2, 4}}));
  // Bands of 2 tile columns walked row by row; the last band is one column wide.
  EXPECT_EQ(gemm_tile_order(grid, {0, 2}), coords({{0, 0},
                                                   {0, 1},
                                                   {1, 0},
                                                   {1, 1},
                                                   {2, 0},
                                                   {2, 1},
                                                   {0, 2},
                                                   {0, 3},
                                                   {1, 2},
                                                   {1, 3},
                                                   {2, 2},
                                                   {2, 3},
                                                   {0, 4},
                                                   {1, 4},
                                                   {2, 4}}));
  // Bands of 2 tile rows walked column by column; the last band is one row high.
  EXPECT_EQ(gemm_tile_order(grid, {1, 2}), coords({{0, 0},
                                                   {1, 0},
                                                   {0, 1},
                                                   {1, 1},
                                                   {0, 2},
                                                   {1, 2},
                                                   {0, 3},
                                                   {1, 3},
                                                   {0, 4},
                                                   {1, 4},
                                                   {2, 0},
                                                   {2, 1},
                                                   {2, 2},
                                                   {2, 3},
                                                   {2, 4}}));
}

TEST(GemmSwizzle, OrderNamesAreEqualExactlyWhenOrdersAre) {
  for (int tiles_m = 1; tiles_m <= 7; ++tiles_m)
    for (int tiles_n = 1; tiles_n <= 7; ++tiles_n) {
      const GemmTileGrid grid{tiles_m, tiles_n};
      std::vector<SwizzleLaunch> launches = {{0, 0}};
      for (int axis : {0, 1})
        for (int group = 1; group <= 9; ++group) launches.push_back({axis, group});
      std::map<std::string, std::vector<HostTileCoord>> by_name;
      std::map<std::vector<std::pair<int, int>>, std::string> by_order;
      for (const SwizzleLaunch& launch : launches) {
        const std::string name = gemm_tile_order_name(grid, launch);
        const std::vector<HostTileCoord> order = gemm_tile_order(grid, launch);
        std::vector<std::pair<int, int>> plain;
        for (const HostTileCoord& c : order) plain.emplace_back(c.tile_m, c.tile_n);
        if (auto it = by_name.find(name); it != by_name.end()) {
          EXPECT_EQ(it->second, order) << name << " on " << tiles_m << "x" << tiles_n;
        }
        by_name[name] = order;
        if (auto it = by_order.find(plain); it != by_order.end()) {
          EXPECT_EQ(it->second, name) << "one order, two names on " << tiles_m << "x" << tiles_n;
        }
        by_order[plain] = name;
      }
    }
}

}  // namespace
}  // namespace swr
