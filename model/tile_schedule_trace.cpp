#include "model/tile_schedule_trace.hpp"

#include <algorithm>
#include <string>

#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

ScheduleShape ScheduleShape::of(const AttentionProblem& problem, TileShape tile) {
  if (tile.block_m < 1 || tile.block_n < 1) {
    throw UsageError("tile " + std::to_string(tile.block_m) + "x" + std::to_string(tile.block_n) +
                     " must have at least one row each way");
  }
  ScheduleShape shape;
  shape.batch_heads = problem.batch * problem.heads;
  shape.seq_q = problem.seq_q;
  shape.seq_kv = problem.seq_kv;
  shape.tile = tile;
  shape.q_tiles = static_cast<int>(ceil_div(problem.seq_q, tile.block_m));
  shape.kv_tiles = static_cast<int>(ceil_div(problem.seq_kv, tile.block_n));
  shape.causal = problem.causal;
  shape.total_tiles = static_cast<std::int64_t>(shape.q_tiles) * shape.batch_heads;
  return shape;
}

TileCoordinate tile_coordinate(std::int64_t linear_tile, const ScheduleShape& shape,
                               TileSwizzle swizzle, int head_group) {
  const std::int64_t q_tiles = shape.q_tiles;
  const std::int64_t batch_heads = shape.batch_heads;
  TileCoordinate coordinate;
  switch (swizzle) {
    case TileSwizzle::head_major:
      coordinate.batch_head = static_cast<int>(linear_tile / q_tiles);
      coordinate.q_tile = static_cast<int>(linear_tile % q_tiles);
      break;
    case TileSwizzle::heads_interleaved:
      coordinate.q_tile = static_cast<int>(linear_tile / batch_heads);
      coordinate.batch_head = static_cast<int>(linear_tile % batch_heads);
      break;
    case TileSwizzle::head_groups: {
      const std::int64_t group = linear_tile / (head_group * q_tiles);
      const std::int64_t first_head = group * head_group;
      const std::int64_t heads_in_group =
          std::min<std::int64_t>(head_group, batch_heads - first_head);
      const std::int64_t within = linear_tile - first_head * q_tiles;
      coordinate.q_tile = static_cast<int>(within / heads_in_group);
      coordinate.batch_head = static_cast<int>(first_head + within % heads_in_group);
      break;
    }
  }
  if (shape.causal) coordinate.q_tile = shape.q_tiles - 1 - coordinate.q_tile;
  return coordinate;
}

int kv_steps_of(const ScheduleShape& shape, int q_tile) {
  return kv_tiles_of_q_tile(q_tile, shape.seq_q, shape.seq_kv, shape.tile, shape.causal);
}

int kv_tile_at(KvOrder order, int step, int kv_steps, int round) {
  const bool backward = order == KvOrder::sawtooth && (round & 1);
  return backward ? kv_steps - 1 - step : step;
}

TileDispenser::TileDispenser(Persistence persistence, std::int64_t total_tiles, int wave_size,
                             int cta_limit)
    : persistence_(persistence), total_tiles_(total_tiles), wave_size_(wave_size) {
  if (wave_size < 1) {
    throw UsageError("wave size " + std::to_string(wave_size) + " must be at least 1");
  }
  std::int64_t slots = std::min<std::int64_t>(total_tiles, wave_size);
  if (persistence != Persistence::grid && cta_limit > 0) {
    slots = std::min<std::int64_t>(slots, cta_limit);
  }
  slot_count_ = static_cast<int>(std::max<std::int64_t>(slots, 0));
  // Every mode starts slot s on tile s (blockIdx.x).
  next_unclaimed_ = slot_count_;
  slot_tile_.resize(slot_count_);
  for (int slot = 0; slot < slot_count_; ++slot) slot_tile_[slot] = slot;
  slot_round_.assign(slot_count_, 0);
}

std::int64_t TileDispenser::cta_count() const {
  return persistence_ == Persistence::grid ? total_tiles_ : slot_count_;
}

std::optional<TileAssignment> TileDispenser::next(int slot) {
  const int taken = slot_round_[slot];
  std::int64_t tile = 0;
  if (taken == 0) {
    tile = slot_tile_[slot];
  } else if (persistence_ == Persistence::static_loop) {
    tile = slot_tile_[slot] + static_cast<std::int64_t>(taken) * slot_count_;
  } else {
    tile = next_unclaimed_;  // grid: next blockIdx; dynamic: atomicAdd(counter, 1) + gridDim.x
    if (tile < total_tiles_) ++next_unclaimed_;
  }
  if (tile >= total_tiles_) return std::nullopt;
  ++slot_round_[slot];
  const int round = persistence_ == Persistence::grid ? static_cast<int>(tile / wave_size_) : taken;
  return TileAssignment{tile, round};
}

std::vector<KvRead> static_cta_reads(const ScheduleShape& shape, const AttentionConfig& config,
                                     int wave_size, int cta, std::size_t limit) {
  TileDispenser dispenser(Persistence::static_loop, shape.total_tiles, wave_size);
  std::vector<KvRead> reads;
  if (cta < 0 || cta >= dispenser.slot_count()) return reads;
  while (reads.size() < limit) {
    const std::optional<TileAssignment> assignment = dispenser.next(cta);
    if (!assignment) break;
    const TileCoordinate coordinate =
        tile_coordinate(assignment->linear_tile, shape, config.swizzle, config.head_group);
    const int steps = kv_steps_of(shape, coordinate.q_tile);
    for (int step = 0; step < steps && reads.size() < limit; ++step) {
      reads.push_back({assignment->round, coordinate,
                       kv_tile_at(config.order, step, steps, assignment->round)});
    }
  }
  return reads;
}

}  // namespace swr::model
