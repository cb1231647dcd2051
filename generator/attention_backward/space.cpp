// The attention backward's variant space: every tile of each instruction path the GPU has (wgmma on
// sm_90a) with the default schedule, then the schedule knobs (Q-walk order, persistence, swizzle),
// the dQ accumulation and (warp-specialized) the consumers' sync and CTA pairs on the preferred
// tiles that fit
// (two mma.sync tiles, the wgmma tile), as
// the forward's wgmma space crosses its schedule knobs with base tiles only: the schedule acts on
// the order of the tiles, which every tile size shares.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "swr/instruction_path.hpp"

namespace swr {
namespace {

struct Tile {
  int block_m;
  int block_n;
  int warps;
};

// The tiles each head dim's accumulators allow, in order of preference for the base tiles: the
// most K/V rows per CTA (the fewest reads of Q and dO) with the most Q rows a step the registers
// allow, as FlashAttention-2 picks its backward tiles per head dim. Each list is what compiled
// without spills for every schedule on sm_90a and sm_121 (tests/generator/
// attention_backward_compile_test.cpp): 64 Q rows a step with 128 K/V rows only up to head dim 64
// (at 96 ptxas spilled on sm_90a), 64 Q rows over 8 split warps only at 160 (at 192 one schedule
// spilled). 32 K/V rows over 4 warps serve the largest head dims on a GPU of 99 KiB (GB10).
std::vector<Tile> tiles_for(int head_dim) {
  if (head_dim <= 64) {
    return {{64, 128, 8}, {32, 128, 8}, {64, 64, 4}, {32, 64, 4}, {128, 64, 4}, {128, 128, 8}};
  }
  if (head_dim <= 128) return {{32, 128, 8}, {64, 64, 4}, {32, 64, 4}};
  if (head_dim <= 160) return {{64, 64, 8}, {32, 64, 8}, {32, 32, 4}};
  return {{32, 64, 8}, {32, 32, 4}};
}
// The wgmma kernels' tiles per head dim (sm_90a): two warpgroups of 64 K/V rows with a producer
// warpgroup (12 warps, warp-specialized: the base tiles) or alone (8 warps), and the Q rows a step
// their registers allow (resources.cpp's wgmma rules); at head dim 256 the wide-head kernel's
// 64 x 64 tile (a producer and two warpgroups that split the products); none elsewhere. At head
// dim 128 both 64 and 80 Q rows a step are base tiles (FlashAttention-3's tiles there: 80 reads
// Q and dO by wgmma of N 80, fewer shared-memory bytes a FLOP, at the cost of dQ transposed).
std::vector<Tile> wgmma_tiles_for(int head_dim) {
  if (head_dim == 64) return {{128, 128, 12}, {128, 128, 8}};
  if (head_dim == 128) return {{64, 128, 12}, {80, 128, 12}, {64, 128, 8}};
  if (head_dim == 256) return {{64, 64, 12}};
  return {};
}
// The schedule knobs go on the warp-specialized tiles (a producer warpgroup: 12 warps), which
// wgmma_tiles_for lists first.
int wgmma_base_tiles(const std::vector<Tile>& tiles) {
  return static_cast<int>(
      std::count_if(tiles.begin(), tiles.end(), [](const Tile& tile) { return tile.warps == 12; }));
}

// One stage (the copy of step s issued at its own start) is left out: ptxas spilled 8 to 120
// bytes in 4 of its 80 tiles x head dims, and never with 2 or 3.
constexpr int kStages[] = {2, 3};
constexpr int kBaseStages = 2;
constexpr KvOrder kOrders[] = {KvOrder::cyclic, KvOrder::sawtooth};
constexpr Persistence kPersistences[] = {Persistence::grid, Persistence::static_loop,
                                         Persistence::dynamic};
constexpr TileSwizzle kSwizzles[] = {TileSwizzle::head_major, TileSwizzle::heads_interleaved,
                                     TileSwizzle::head_groups};
constexpr DqAccumulation kDqModes[] = {DqAccumulation::atomic, DqAccumulation::deterministic};
constexpr ConsumerSync kConsumerSyncs[] = {ConsumerSync::lockstep, ConsumerSync::lagged};
constexpr int kBaseTiles = 2;

AttentionBackwardConfig tile_config(const Tile& tile, int stages,
                                    InstructionPath path = InstructionPath::mma_sync) {
  AttentionBackwardConfig config;
  config.path = path;
  config.block_m = tile.block_m;
  config.block_n = tile.block_n;
  config.warps = tile.warps;
  config.stages = stages;
  return config;
}

// The warp-specialized config one Q/dO stage deeper with dQ added from the consumers' registers,
// where that stage fits only without the dQ writer's shared buffer (head dim 64 at 128 Q rows:
// 200,192 bytes with two stages, 233,984 with three and the buffer), with the causal mask. On the
// H200 (bench/results/attention-backward-ws-h200/dq-from-registers-2026-11-28) it took
// 0.984-0.996x the two-stage time with the mask and 1.08x without it, and the route alone, at the
// same depth, 1.00-1.10x: so it stays out where it frees no stage, and without the mask.
std::optional<AttentionBackwardConfig> deeper_ring_by_registers_dq(
    const AttentionBackwardProblem& problem, const AttentionBackwardConfig& config,
    const GpuProfile& gpu) {
  AttentionBackwardConfig deeper = config;
  ++deeper.stages;
  // (A stage past the rule's 1..3 fits neither way.)
  if (!problem.shape.causal || !config.may_add_dq_from_registers() ||
      attention_backward_resource_use(problem, deeper, gpu).does_not_fit.empty()) {
    return std::nullopt;
  }
  deeper.dq_from_registers = true;
  if (!attention_backward_resource_use(problem, deeper, gpu).does_not_fit.empty()) {
    return std::nullopt;
  }
  return deeper;
}

// (batch, K/V head) pairs whose shared reads (Q and dO of the K/V head's query heads) fit the part
// of the L2 that data every SM reads can use (one partition's share on sm_90, as the forward's
// head_group_fitting_l2 says), at least one.
int head_group_fitting_l2(const AttentionBackwardProblem& problem, const GpuProfile& gpu) {
  const AttentionProblem& shape = problem.shape;
  const double usable_l2 = static_cast<double>(gpu.l2_bytes) / std::max(gpu.l2_partitions, 1);
  const double per_kv_head = 2.0 * shape.query_heads_per_kv_head() * shape.seq_q * shape.head_dim *
                             element_bytes(shape.dtype);
  const std::int64_t pairs = static_cast<std::int64_t>(shape.batch) * shape.kv_head_count();
  std::int64_t group = per_kv_head > 0 ? static_cast<std::int64_t>(usable_l2 / per_kv_head) : 1;
  return static_cast<int>(std::clamp<std::int64_t>(group, 1, std::max<std::int64_t>(pairs, 1)));
}

// Why a config is redundant or wasteful for this problem; empty when it is worth measuring.
std::string problem_reason(const AttentionBackwardProblem& problem,
                           const AttentionBackwardConfig& config) {
  const AttentionProblem& shape = problem.shape;
  const std::int64_t pairs = static_cast<std::int64_t>(shape.batch) * shape.kv_head_count();
  if (config.block_m > 2 * std::max(shape.seq_q, 32)) {
    return "block_m " + std::to_string(config.block_m) + " is larger than twice seq_q " +
           std::to_string(shape.seq_q) + ": a step would be mostly padding";
  }
  if (config.cta_pairs && shape.seq_kv <= config.block_n) {
    return "cta_pairs with one K/V tile a head (seq_kv " + std::to_string(shape.seq_kv) +
           " <= block_n " + std::to_string(config.block_n) + "): the pair's second CTA has none";
  }
  if (pairs == 1 && config.swizzle != TileSwizzle::head_major) {
    return "batch*kv_heads is 1: every swizzle is the same as head_major";
  }
  if (config.swizzle == TileSwizzle::head_groups && config.head_group <= 1) {
    return "a head group of 1 (one K/V head's Q and dO already fill the usable L2) is the same "
           "as head_major";
  }
  if (config.swizzle == TileSwizzle::head_groups && config.head_group >= pairs) {
    return "a head group of " + std::to_string(config.head_group) + " covers all " +
           std::to_string(pairs) + " (batch, K/V head) pairs: the same as heads_interleaved";
  }
  return {};
}

}  // namespace

std::vector<AttentionBackwardConfig> enumerate_attention_backward_configs(
    const AttentionBackwardProblem& problem, const GpuProfile& gpu) {
  std::vector<AttentionBackwardConfig> configs;
  const int group = head_group_fitting_l2(problem, gpu);
  // Every tile of a path with the default schedule, then the schedule knobs on its first
  // `base_tiles` tiles that fit.
  const auto append_path = [&](InstructionPath path, const std::vector<Tile>& tiles,
                               int base_tiles) {
    for (const Tile& tile : tiles) {
      for (int stages : kStages) configs.push_back(tile_config(tile, stages, path));
    }
    int bases = 0;
    for (const Tile& tile : tiles) {
      if (bases == base_tiles) break;
      const AttentionBackwardConfig base = tile_config(tile, kBaseStages, path);
      if (!attention_backward_resource_use(problem, base, gpu).does_not_fit.empty()) continue;
      ++bases;
      for (KvOrder order : kOrders) {
        for (Persistence persistence : kPersistences) {
          for (TileSwizzle swizzle : kSwizzles) {
            for (DqAccumulation dq : kDqModes) {
              for (ConsumerSync consumers : kConsumerSyncs) {
                // Lagged consumers are the two-warpgroup warp-specialized kernel's alone.
                if (consumers == ConsumerSync::lagged && !base.pairs_kv_warpgroups()) continue;
                AttentionBackwardConfig config = base;
                config.order = order;
                config.persistence = persistence;
                config.swizzle = swizzle;
                config.head_group = swizzle == TileSwizzle::head_groups ? group : 1;
                config.dq = dq;
                config.consumers = consumers;
                // Each with its CTA pairs where they may be.
                const auto push_with_pairs = [&](AttentionBackwardConfig variant) {
                  if (variant != base) configs.push_back(variant);
                  variant.cta_pairs = true;
                  if (variant.may_pair_ctas()) configs.push_back(variant);
                };
                push_with_pairs(config);
                if (const std::optional<AttentionBackwardConfig> deeper =
                        deeper_ring_by_registers_dq(problem, config, gpu)) {
                  push_with_pairs(*deeper);
                }
              }
            }
          }
        }
      }
    }
  };
  append_path(InstructionPath::mma_sync, tiles_for(problem.shape.head_dim), kBaseTiles);
  if (supports(gpu, InstructionPath::wgmma)) {
    const std::vector<Tile> tiles = wgmma_tiles_for(problem.shape.head_dim);
    append_path(InstructionPath::wgmma, tiles, wgmma_base_tiles(tiles));
  }
  return configs;
}

AttentionBackwardSpace build_attention_backward_space(const AttentionBackwardProblem& problem,
                                                      const GpuProfile& gpu) {
  problem.validate();
  AttentionBackwardSpace space;
  for (const AttentionBackwardConfig& config : enumerate_attention_backward_configs(problem, gpu)) {
    std::string reason = attention_backward_resource_use(problem, config, gpu).does_not_fit;
    if (reason.empty()) reason = problem_reason(problem, config);
    space.keep_or_prune(config, std::move(reason));
  }
  return space;
}

}  // namespace swr
