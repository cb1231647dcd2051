#include "model/work_makespan.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "generator/gemm_swizzle.hpp"
#include "model/schedule_replay.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

void require_slots(int slots) {
  if (slots < 1) throw UsageError("CTA slots " + std::to_string(slots) + " must be at least 1");
}

// Slots take tiles as they free up (ties: the lower slot first); `take(slot)` returns the next
// tile's steps, or a negative number when the slot gets none.
template <class Take>
double greedy_makespan(int slots, Take&& take) {
  using Entry = std::pair<double, int>;  // (time the slot is free, slot)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> free_at;
  for (int slot = 0; slot < slots; ++slot) free_at.push({0.0, slot});
  double makespan = 0;
  while (!free_at.empty()) {
    const auto [time, slot] = free_at.top();
    free_at.pop();
    const double steps = take(slot);
    if (steps < 0) {
      makespan = std::max(makespan, time);
      continue;
    }
    free_at.push({time + steps, slot});
  }
  return makespan;
}

}  // namespace

WorkMakespan attention_makespan(const AttentionProblem& problem, const AttentionConfig& config,
                                int slots) {
  require_slots(slots);
  const ScheduleShape shape = ScheduleShape::of(problem, TileShape{config.block_m, config.block_n});
  TileDispenser dispenser(config.persistence, shape.total_tiles, slots);
  WorkMakespan result;
  result.tiles = shape.total_tiles;
  result.slots = dispenser.slot_count();
  const auto steps_of = [&](std::int64_t tile) {
    return kv_steps_of(shape,
                       tile_coordinate(tile, shape, config.swizzle, config.head_group).q_tile);
  };
  for (std::int64_t tile = 0; tile < shape.total_tiles; ++tile)
    result.total_steps += steps_of(tile);
  if (config.persistence == Persistence::static_loop) {
    // The stride does not depend on timing: each slot's tiles add up.
    std::vector<double> load(result.slots, 0.0);
    for (std::int64_t tile = 0; tile < shape.total_tiles; ++tile) {
      load[tile % result.slots] += steps_of(tile);
    }
    result.busiest_slot_steps = *std::max_element(load.begin(), load.end());
    return result;
  }
  result.busiest_slot_steps = greedy_makespan(result.slots, [&](int slot) -> double {
    const std::optional<TileAssignment> next = dispenser.next(slot);
    return next ? steps_of(next->linear_tile) : -1.0;
  });
  return result;
}

WorkMakespan gemm_makespan(const GemmProblem& problem, const GemmConfig& config, int slots) {
  require_slots(slots);
  const GemmTileGrid grid = gemm_raster_grid(problem, config);
  const int cluster = config.cluster_size();
  // A cluster's CTAs run one raster tile together: a cluster is one slot of `cluster` CTAs.
  const int cluster_slots = std::max(1, slots / cluster);
  const double k_blocks = static_cast<double>((problem.k + config.block_k - 1) / config.block_k);
  WorkMakespan result;
  result.tiles = grid.tiles();
  result.total_steps = static_cast<double>(result.tiles) * k_blocks;
  const std::int64_t used =
      config.persistence == GemmPersistence::grid
          ? std::min<std::int64_t>(cluster_slots, result.tiles)
          : std::min<std::int64_t>(cluster_slots, std::max<std::int64_t>(result.tiles, 1));
  result.slots = static_cast<int>(used) * cluster;
  if (result.tiles == 0) return result;
  const std::int64_t waves = result.tiles / used;
  const std::int64_t rest = result.tiles % used;
  switch (config.persistence) {
    case GemmPersistence::static_loop:
      result.busiest_slot_steps = static_cast<double>(waves + (rest > 0 ? 1 : 0)) * k_blocks;
      break;
    case GemmPersistence::stream_k:
      // The last partial wave's k blocks, split evenly over every slot.
      result.busiest_slot_steps =
          static_cast<double>(waves) * k_blocks +
          (rest > 0 ? std::ceil(static_cast<double>(rest) * k_blocks / static_cast<double>(used))
                    : 0.0);
      break;
    case GemmPersistence::grid:
    case GemmPersistence::dynamic_loop: {
      // Equal tiles: the slot that frees first is the next in turn, so the waves add up.
      result.busiest_slot_steps = static_cast<double>(waves + (rest > 0 ? 1 : 0)) * k_blocks;
      break;
    }
  }
  return result;
}

}  // namespace swr::model
