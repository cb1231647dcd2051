#include "generator/attention_space.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include "generator/resource_model.hpp"

namespace swr {
namespace {

struct Tile {
  int block_m;
  int block_n;
  int warps;
};

// The tiles the mma.sync layer is written for: 16 or 32 Q rows per warp, 64 or 128 K/V rows a step
// (the resource model prunes what a head dim's accumulators or shared memory cannot hold).
constexpr Tile kTiles[] = {{64, 64, 4}, {128, 64, 4}, {128, 64, 8}, {128, 128, 8}, {64, 128, 4}};
// From head dim 160 on also 32 K/V rows a step, FlashAttention-2's choice for large heads: the O
// accumulators (16 rows x head_dim per warp) leave fewer registers for S, and a K/V stage of
// D=256 is 32 KiB per 64 rows, so on a 99 KiB GPU (GB10) only short K/V tiles pipeline.
constexpr Tile kLargeHeadTiles[] = {{64, 32, 4}, {128, 32, 8}};
constexpr int kLargeHeadDim = 160;
constexpr int kStages[] = {1, 2, 3};
constexpr KvOrder kOrders[] = {KvOrder::cyclic, KvOrder::sawtooth};
constexpr Persistence kPersistences[] = {Persistence::grid, Persistence::static_loop,
                                         Persistence::dynamic};
constexpr TileSwizzle kSwizzles[] = {TileSwizzle::head_major, TileSwizzle::heads_interleaved,
                                     TileSwizzle::head_groups};

// The wgmma path (sm_90a only). Consumer modes: (consumer warpgroups, overlap, pingpong);
// pingpong orders two warpgroups, or three in turn. Three overlapped warpgroups always take turns
// (FA3/FA4's 192-row mode): without turns they measured 2-33% slower in 21 of 22 pairs timed (0.2%
// faster in the last: bench/results/wgmma-attention-pp3-h100/), so that mode is not enumerated.
struct ConsumerMode {
  int warpgroups;
  bool overlap;
  bool pingpong;
};
constexpr ConsumerMode kConsumerModes[] = {{2, false, false}, {2, true, false},  {2, true, true},
                                           {2, false, true},  {3, false, false}, {3, true, true}};
constexpr int kWgmmaStages[] = {2, 3};
constexpr KvCacheHint kKvCacheHints[] = {KvCacheHint::none, KvCacheHint::evict_last};

// K/V rows per step by head dim, around FA3's choice for it (hopper/tile_size.h: 192x192 and
// 192x128 up to D=64, 192x144 up to 96, 128x176 and 128x128 at 128, 128x112/128x128 up to 192,
// 128x80 at 256): the O accumulator (D/2 registers per consumer thread) and the K/V ring (4 x
// block_n x D x 2 bytes at 2 stages) leave room for less at larger D. The resource model prunes
// what a head dim cannot hold (3 warpgroups above D=96 mostly, 3 stages above D=128). The
// schedule knobs (order, persistence, swizzle, L2 hint) are crossed with two base tiles only,
// not with every tile: the full product is ~1000 variants, and the schedule acts on the order of
// tiles, which the base tiles share with the others. The bases are FA3's consumer modes: 2
// warpgroups overlapped and pingponged, and 3 plain where 3 fit (D <= 128) or 2 overlapped
// without pingpong (FA3's D=256 mode) where they do not.
struct HeadDimTiles {
  int max_head_dim;
  std::vector<int> block_ns;
  int base_block_n;
  ConsumerMode second_base_mode;
};
const HeadDimTiles& wgmma_tiles_for(int head_dim) {
  static const HeadDimTiles kTiles[] = {
      {64, {128, 160, 176, 192}, 128, {3, false, false}},
      {96, {112, 128, 144, 160}, 128, {3, false, false}},
      {128, {128, 160, 176, 192}, 128, {3, false, false}},
      {192, {64, 96, 112, 128}, 112, {2, true, false}},
      {256, {48, 64, 80}, 80, {2, true, false}},
  };
  for (const HeadDimTiles& tiles : kTiles) {
    if (head_dim <= tiles.max_head_dim) return tiles;
  }
  return kTiles[std::size(kTiles) - 1];
}
constexpr ConsumerMode kScheduleBaseMode = {2, true, true};
constexpr int kScheduleBaseStages = 2;

constexpr int kTileRowGranularity = 64;

AttentionConfig wgmma_config(const ConsumerMode& mode, int block_n, int stages,
                             bool p_in_smem = false) {
  AttentionConfig config;
  config.path = InstructionPath::wgmma;
  config.block_m = 64 * mode.warpgroups;
  config.warps = AttentionConfig::wgmma_warps(config.block_m);
  config.block_n = block_n;
  config.stages = stages;
  config.overlap = mode.overlap;
  config.pingpong = mode.pingpong;
  config.p_in_smem = p_in_smem;
  return config;
}

// Every consumer mode x block_n x stages x P form (registers, shared memory) on the default
// schedule, then the schedule knobs on the base tiles. P in shared memory costs 8 KiB per 64 keys
// per consumer warpgroup; the resource model prunes the tiles it no longer fits.
void append_wgmma_configs(int head_dim, int group, std::vector<AttentionConfig>& configs) {
  const HeadDimTiles& tiles = wgmma_tiles_for(head_dim);
  for (bool p_in_smem : {false, true}) {
    for (const ConsumerMode& mode : kConsumerModes) {
      for (int block_n : tiles.block_ns) {
        for (int stages : kWgmmaStages) {
          configs.push_back(wgmma_config(mode, block_n, stages, p_in_smem));
        }
      }
    }
  }
  for (const ConsumerMode& mode : {kScheduleBaseMode, tiles.second_base_mode}) {
    const AttentionConfig base = wgmma_config(mode, tiles.base_block_n, kScheduleBaseStages);
    for (KvOrder order : kOrders) {
      for (Persistence persistence : kPersistences) {
        for (TileSwizzle swizzle : kSwizzles) {
          for (KvCacheHint hint : kKvCacheHints) {
            AttentionConfig config = base;
            config.order = order;
            config.persistence = persistence;
            config.swizzle = swizzle;
            config.head_group = swizzle == TileSwizzle::head_groups ? group : 1;
            config.kv_cache_hint = hint;
            if (config == base) continue;
            configs.push_back(config);
          }
        }
      }
    }
  }
}

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Why a config is redundant or wasteful for this problem; empty when it is worth measuring.
std::string problem_reason(const AttentionProblem& problem, const AttentionConfig& config) {
  const std::int64_t pairs = static_cast<std::int64_t>(problem.batch) * problem.heads;
  const std::int64_t tile_limit =
      round_up(2 * static_cast<std::int64_t>(problem.seq_q), kTileRowGranularity);
  if (config.block_m > tile_limit) {
    return "block_m " + std::to_string(config.block_m) + " is larger than twice seq_q " +
           std::to_string(problem.seq_q) + " (rounded up to " +
           std::to_string(kTileRowGranularity) + "): the tile would be mostly padding";
  }
  if (pairs == 1 && config.swizzle != TileSwizzle::head_major) {
    return "batch*heads is 1: every swizzle is the same as head_major";
  }
  if (config.swizzle == TileSwizzle::head_groups && config.head_group <= 1) {
    return "a head group of 1 (one head's K/V already fills the usable L2) is the same as "
           "head_major";
  }
  if (config.swizzle == TileSwizzle::head_groups && config.head_group >= pairs) {
    return "a head group of " + std::to_string(config.head_group) + " covers all " +
           std::to_string(pairs) + " (batch, head) pairs: the same as heads_interleaved";
  }
  return {};
}

}  // namespace

int head_group_fitting_l2(const AttentionProblem& problem, const GpuProfile& gpu) {
  // On sm_90 the L2 is two partitions and data every SM reads behaves as if each kept a copy
  // (bench/results/h200-l2-streaming/README.md): only one partition's share holds a shared working
  // set.
  const double usable_l2 = static_cast<double>(gpu.l2_bytes) / std::max(gpu.l2_partitions, 1);
  const double per_kv_head = problem.kv_bytes_per_head();
  const std::int64_t pairs = static_cast<std::int64_t>(problem.batch) * problem.heads;
  // The K/V heads whose K and V fit, at least one; with GQA each brings all its query heads, so
  // that the query heads sharing a K/V head are scheduled together and read its tiles while they
  // are in the L2 (groups start on K/V-head boundaries: both sizes are multiples of the ratio).
  std::int64_t kv_heads =
      per_kv_head > 0 ? static_cast<std::int64_t>(usable_l2 / per_kv_head) : pairs;
  kv_heads = std::max<std::int64_t>(kv_heads, 1);
  std::int64_t group = kv_heads * problem.query_heads_per_kv_head();
  group = std::clamp<std::int64_t>(group, 1, std::max<std::int64_t>(pairs, 1));
  return static_cast<int>(group);
}

std::vector<AttentionConfig> enumerate_attention_configs(const AttentionProblem& problem,
                                                         const GpuProfile& gpu) {
  const int group = head_group_fitting_l2(problem, gpu);
  std::vector<AttentionConfig> configs;
  std::vector<Tile> tiles(std::begin(kTiles), std::end(kTiles));
  if (problem.head_dim >= kLargeHeadDim) {
    tiles.insert(tiles.end(), std::begin(kLargeHeadTiles), std::end(kLargeHeadTiles));
  }
  for (const Tile& tile : tiles) {
    for (int stages : kStages) {
      for (KvOrder order : kOrders) {
        for (Persistence persistence : kPersistences) {
          for (TileSwizzle swizzle : kSwizzles) {
            AttentionConfig config;
            config.block_m = tile.block_m;
            config.block_n = tile.block_n;
            config.warps = tile.warps;
            config.stages = stages;
            config.order = order;
            config.persistence = persistence;
            config.swizzle = swizzle;
            config.head_group = swizzle == TileSwizzle::head_groups ? group : 1;
            configs.push_back(config);
          }
        }
      }
    }
  }
  if (supports(gpu, InstructionPath::wgmma)) append_wgmma_configs(problem.head_dim, group, configs);
  return configs;
}

AttentionSpace build_attention_space(const AttentionProblem& problem, const GpuProfile& gpu) {
  problem.validate();
  AttentionSpace space;
  for (const AttentionConfig& config : enumerate_attention_configs(problem, gpu)) {
    std::string reason = attention_resource_use(problem, config, gpu).does_not_fit;
    if (reason.empty()) reason = problem_reason(problem, config);
    space.keep_or_prune(config, std::move(reason));
  }
  return space;
}

}  // namespace swr
