#include "generator/gemm_space.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "generator/gemm_swizzle.hpp"
#include "generator/resource_model.hpp"

namespace swr {
namespace {

struct TileShape {
  int block_m;
  int block_n;
  int warps_m;
  int warps_n;
};

// Warp tiles of 64x32, 64x64 and 32x64 (8 or 4 warps), and a 32x32 one for small problems.
constexpr TileShape kTiles[] = {{128, 128, 2, 4}, {128, 256, 2, 4}, {256, 128, 4, 2},
                                {128, 128, 2, 2}, {64, 128, 2, 2},  {64, 64, 2, 2}};
constexpr int kBlockKs[] = {32, 64};
constexpr int kStages[] = {2, 3, 4};
constexpr GemmPersistence kPersistences[] = {GemmPersistence::grid, GemmPersistence::static_loop};

// The wgmma kernel's tiles that compiled and passed on the H200 (bench/results/hopper-gemm-h200),
// each with the ring depth that fits next to its C staging, under static or dynamic persistence
// and, static only, the 2x1 cluster that multicasts B, the 1x2 one that multicasts A and the 2x2
// one that multicasts both (for row pitches that are not multiples of 128 bytes, where every box
// row costs two L2 lines: bench/results/gemm-wgmma-ragged-h200); and stream-K (cooperative tiles
// only: the resource model prunes pingpong), alone and in 2x1 and 2x2 clusters, for shapes whose
// tiles leave a partial last wave (on the H200 it beat static for 128x256 at 3072^3 but lost to a
// smaller tile there).
struct WgmmaTile {
  int block_m;
  int block_n;
  int stages;
  GemmConsumerMode mode;
};
constexpr WgmmaTile kWgmmaTiles[] = {
    {128, 256, 3, GemmConsumerMode::cooperative}, {256, 128, 3, GemmConsumerMode::cooperative},
    {128, 192, 4, GemmConsumerMode::cooperative}, {128, 128, 4, GemmConsumerMode::cooperative},
    {128, 128, 4, GemmConsumerMode::pingpong},    {64, 256, 4, GemmConsumerMode::pingpong}};
struct WgmmaSchedule {
  GemmPersistence persistence;
  int cluster_m;
  int cluster_n;
};
constexpr WgmmaSchedule kWgmmaSchedules[] = {
    {GemmPersistence::static_loop, 1, 1}, {GemmPersistence::dynamic_loop, 1, 1},
    {GemmPersistence::static_loop, 2, 1}, {GemmPersistence::static_loop, 1, 2},
    {GemmPersistence::stream_k, 1, 1},    {GemmPersistence::stream_k, 2, 1},
    {GemmPersistence::static_loop, 2, 2}, {GemmPersistence::stream_k, 2, 2}};

// Widths that are not multiples of 64 (B's last 64-column chunk part-used), for ragged N, in 2x2
// clusters only. 2x2 recovers the L2 requests of misaligned rows, but the H200 holds only 30 2x2
// clusters at once, so a shape runs well when its cluster tiles come near a multiple of 30:
// 3000x7000 has 228 cluster tiles of 128x192 and 168 of 128x256 (7.6 and 5.6 waves, run as 8 and
// 6), but 240 of 128x176 (8 whole waves): 8% less time per CTA. The tuner picks the width.
constexpr WgmmaTile kWgmmaRaggedTiles[] = {
    {128, 144, 4, GemmConsumerMode::cooperative}, {128, 160, 4, GemmConsumerMode::cooperative},
    {128, 176, 4, GemmConsumerMode::cooperative}, {128, 208, 3, GemmConsumerMode::cooperative},
    {128, 224, 3, GemmConsumerMode::cooperative}, {128, 240, 3, GemmConsumerMode::cooperative}};
constexpr WgmmaSchedule kWgmmaRaggedSchedules[] = {{GemmPersistence::static_loop, 2, 2}};

// The same widths and the 192/256-wide tiles, transposed (C^T = B^T · A^T), for a ragged M: tile
// heights move in steps of 64, but a transposed tile's width runs along M in steps of 16. At
// 7000x3000x5000 no 128-row tile in 2x2 clusters gets past a 0.81 work efficiency; its transpose
// is the 3000x7000 case the widths above serve (bench/results/gemm-wgmma-ragged-h200).
constexpr WgmmaTile kWgmmaTransposedTiles[] = {
    {128, 144, 4, GemmConsumerMode::cooperative}, {128, 160, 4, GemmConsumerMode::cooperative},
    {128, 176, 4, GemmConsumerMode::cooperative}, {128, 192, 4, GemmConsumerMode::cooperative},
    {128, 208, 3, GemmConsumerMode::cooperative}, {128, 224, 3, GemmConsumerMode::cooperative},
    {128, 240, 3, GemmConsumerMode::cooperative}, {128, 256, 3, GemmConsumerMode::cooperative}};

// Every wgmma binary, in plain order.
std::vector<GemmConfig> wgmma_binaries() {
  std::vector<GemmConfig> configs;
  const auto add = [&](const WgmmaTile& tile, const WgmmaSchedule& schedule,
                       bool transposed = false) {
    GemmConfig config;
    config.path = InstructionPath::wgmma;
    config.block_m = tile.block_m;
    config.block_n = tile.block_n;
    config.block_k = 64;
    config.stages = tile.stages;
    config.consumer_mode = tile.mode;
    config.persistence = schedule.persistence;
    config.cluster_m = schedule.cluster_m;
    config.cluster_n = schedule.cluster_n;
    config.transposed = transposed;
    configs.push_back(config);
  };
  for (const WgmmaTile& tile : kWgmmaTiles)
    for (const WgmmaSchedule& schedule : kWgmmaSchedules) add(tile, schedule);
  for (const WgmmaTile& tile : kWgmmaRaggedTiles)
    for (const WgmmaSchedule& schedule : kWgmmaRaggedSchedules) add(tile, schedule);
  for (const WgmmaTile& tile : kWgmmaTransposedTiles)
    for (const WgmmaSchedule& schedule : kWgmmaRaggedSchedules) add(tile, schedule, true);
  return configs;
}

// The kernel binary a config compiles to: everything but the swizzle (a launch argument).
std::string binary_key(const GemmConfig& config) {
  return with_swizzle(config, 0, SwizzleAxis::n).key();
}

// Transposed tiles are for an m that 128-row tiles leave ragged; elsewhere they only lengthen the
// tune.
std::string transposed_reason(const GemmProblem& problem, const GemmConfig& config) {
  if (!config.transposed || problem.m % 128 != 0) return {};
  return "transposed: m " + std::to_string(problem.m) +
         " is whole 128-row tiles (transposed tiles are for a ragged m)";
}

// Why a config is redundant for this problem; empty when it is worth measuring.
// (wgmma has no grid mode: there the redundant one is dynamic, which claims nothing past one wave.)
std::string persistence_reason(const GemmProblem& problem, const GemmConfig& config,
                               const GpuProfile& gpu, int blocks_per_sm) {
  const bool wgmma = config.path == InstructionPath::wgmma;
  if (config.persistence == GemmPersistence::stream_k) {
    // Nothing to split when the raster tiles fill whole waves of units (CTAs or clusters).
    const long long tiles = gemm_raster_grid(problem, config).tiles();
    const long long units =
        static_cast<long long>(blocks_per_sm) * gpu.sm_count / config.cluster_size();
    if (units > 0 && tiles % units == 0) {
      return "stream-K persistence: " + std::to_string(tiles) + " tiles fill whole waves of " +
             std::to_string(units) + " units, the same schedule as static";
    }
    return {};
  }
  const GemmPersistence redundant =
      wgmma ? GemmPersistence::dynamic_loop : GemmPersistence::static_loop;
  if (config.persistence != redundant) return {};
  const long long tiles = gemm_tile_grid(problem, config).tiles();
  const long long wave = static_cast<long long>(blocks_per_sm) * gpu.sm_count;
  if (tiles <= wave) {
    return std::string(to_string(redundant)) + " persistence: all " + std::to_string(tiles) +
           " tiles fit in one wave of " + std::to_string(wave) + " CTAs, the same schedule as " +
           (wgmma ? "static" : "grid");
  }
  return {};
}

}  // namespace

GemmConfig with_swizzle(GemmConfig config, int stride, SwizzleAxis axis) {
  config.swizzle_stride = stride;
  config.swizzle_axis = stride > 0 ? axis : SwizzleAxis::n;
  return config;
}

std::vector<GemmConfig> enumerate_gemm_configs() {
  // The swizzle varies slowest: every binary in plain order first, then every binary under each
  // stride, so that a run cut short by --limit or --time-budget has seen every tile shape.
  std::vector<std::pair<int, SwizzleAxis>> swizzles;
  for (SwizzleAxis axis : {SwizzleAxis::n, SwizzleAxis::m}) {
    for (int stride : kPaperSwizzleStrides) {
      if (stride == 0 && axis == SwizzleAxis::m) continue;  // one plain order
      swizzles.emplace_back(stride, axis);
    }
  }
  std::vector<GemmConfig> configs;
  for (const auto& [stride, axis] : swizzles) {
    for (const TileShape& tile : kTiles) {
      for (int block_k : kBlockKs) {
        for (int stages : kStages) {
          for (GemmPersistence persistence : kPersistences) {
            GemmConfig config;
            config.block_m = tile.block_m;
            config.block_n = tile.block_n;
            config.block_k = block_k;
            config.warps_m = tile.warps_m;
            config.warps_n = tile.warps_n;
            config.stages = stages;
            config.persistence = persistence;
            configs.push_back(with_swizzle(config, stride, axis));
          }
        }
      }
    }
    for (const GemmConfig& config : wgmma_binaries())
      configs.push_back(with_swizzle(config, stride, axis));
  }
  return configs;
}

GemmSpace build_gemm_space(const GemmProblem& problem, const GpuProfile& gpu,
                           const GemmSpaceOptions& options) {
  problem.validate();
  GemmSpace space;
  // binary key + order name -> the first config that has it.
  std::map<std::string, std::string> orders_seen;
  for (const GemmConfig& config : enumerate_gemm_configs()) {
    const ResourceUse use = gemm_resource_use(config, gpu);
    std::string reason = use.does_not_fit;  // gb10: every wgmma variant, naming the arch
    if (reason.empty()) reason = transposed_reason(problem, config);
    if (reason.empty()) reason = persistence_reason(problem, config, gpu, use.blocks_per_sm);
    if (reason.empty() && !options.keep_equivalent_orders) {
      const std::string order =
          gemm_tile_order_name(gemm_raster_grid(problem, config), swizzle_launch(config));
      const auto [seen, inserted] =
          orders_seen.emplace(binary_key(config) + " " + order, config.key());
      if (!inserted) {
        reason = "tile order " + order + " is the same as " + seen->second + "'s";
      }
    }
    space.keep_or_prune(config, std::move(reason));
  }
  return space;
}

}  // namespace swr
