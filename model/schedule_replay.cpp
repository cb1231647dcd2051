#include "model/schedule_replay.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "swr/usage_error.hpp"
#include "templates/attention/attention_args.cuh"
#include "templates/attention/attention_schedule.cuh"

namespace swr::model {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

attention::TileSwizzle schedule_swizzle(TileSwizzle swizzle) {
  switch (swizzle) {
    case TileSwizzle::head_major:
      return attention::TileSwizzle::head_major;
    case TileSwizzle::heads_interleaved:
      return attention::TileSwizzle::heads_interleaved;
    case TileSwizzle::head_groups:
      break;
  }
  return attention::TileSwizzle::head_groups;
}

attention::KvOrder schedule_order(KvOrder order) {
  return order == KvOrder::sawtooth ? attention::KvOrder::sawtooth : attention::KvOrder::cyclic;
}

ScheduleShape ScheduleShape::of(const AttentionProblem& problem, TileShape tile) {
  if (tile.block_m < 1 || tile.block_n < 1) {
    throw UsageError("tile " + std::to_string(tile.block_m) + "x" + std::to_string(tile.block_n) +
                     " must have at least one row each way");
  }
  ScheduleShape shape;
  shape.batch_heads = problem.batch * problem.heads;
  shape.heads = problem.heads;
  shape.kv_heads = problem.kv_head_count();
  shape.kv_batch_heads = problem.batch * shape.kv_heads;
  shape.causal_shift = problem.causal_shift();
  shape.seq_q = problem.seq_q;
  shape.seq_kv = problem.seq_kv;
  shape.tile = tile;
  shape.q_tiles = static_cast<int>(ceil_div(problem.seq_q, tile.block_m));
  shape.kv_tiles = static_cast<int>(ceil_div(problem.seq_kv, tile.block_n));
  shape.causal = problem.causal;
  shape.total_tiles = static_cast<std::int64_t>(shape.q_tiles) * shape.batch_heads;
  // The kernel numbers tiles with an int (blockIdx.x), and so does the schedule it shares with us.
  if (shape.total_tiles > std::numeric_limits<int>::max()) {
    throw UsageError(std::to_string(shape.total_tiles) + " tiles must be at most " +
                     std::to_string(std::numeric_limits<int>::max()) + " (one int of tile index)");
  }
  return shape;
}

TileCoordinate tile_coordinate(std::int64_t linear_tile, const ScheduleShape& shape,
                               TileSwizzle swizzle, int head_group) {
  const attention::TileCoord coord =
      attention::tile_coord(schedule_swizzle(swizzle), head_group, shape.causal,
                            static_cast<int>(linear_tile), shape.q_tiles, shape.batch_heads);
  return {coord.batch_head, coord.q_tile};
}

int kv_batch_head_of(const ScheduleShape& shape, int batch_head) {
  const int batch = batch_head / shape.heads;
  const int head = batch_head - batch * shape.heads;
  return batch * shape.kv_heads + attention::kv_head_of(head, shape.heads, shape.kv_heads);
}

int kv_steps_of(const ScheduleShape& shape, int q_tile) {
  return kv_tiles_of_q_tile(q_tile, shape.seq_q, shape.seq_kv, shape.tile, shape.causal,
                            shape.causal_shift);
}

int kv_tile_at(KvOrder order, int step, int kv_steps, int round) {
  return attention::kv_tile_at(schedule_order(order), step, kv_steps, round);
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
  next_cta_ = slot_count_;
  slot_round_.assign(slot_count_, 0);
}

std::int64_t TileDispenser::cta_count() const {
  return persistence_ == Persistence::grid ? total_tiles_ : slot_count_;
}

std::optional<TileAssignment> TileDispenser::next(int slot) {
  // Every mode starts slot s on tile s (blockIdx.x); the rules are attention_schedule.cuh's.
  const int taken = slot_round_[slot];
  std::int64_t tile = 0;
  if (taken == 0) {
    tile = slot;
  } else if (persistence_ == Persistence::static_loop) {
    tile = attention::static_tile(slot, taken, slot_count_);
  } else if (persistence_ == Persistence::dynamic) {
    tile = attention::dynamic_claimed_tile(static_cast<int>(next_claim_), slot_count_);
    if (tile < total_tiles_) ++next_claim_;
  } else {
    tile = next_cta_;  // a freed slot runs the next CTA in blockIdx order
    if (tile < total_tiles_) ++next_cta_;
  }
  if (tile >= total_tiles_) return std::nullopt;
  ++slot_round_[slot];
  const int round = persistence_ == Persistence::grid
                        ? attention::grid_round(static_cast<int>(tile), wave_size_)
                        : taken;
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

WavefrontInterleaving::WavefrontInterleaving(const ScheduleShape& shape,
                                             const AttentionConfig& config, int wave_size,
                                             int cta_limit, ProgressModel progress)
    : shape_(shape),
      order_(config.order),
      swizzle_(config.swizzle),
      head_group_(config.head_group),
      dispenser_(config.persistence, shape.total_tiles, wave_size, cta_limit) {
  const int slot_count = dispenser_.slot_count();
  slots_.resize(slot_count);
  for (int slot = 0; slot < slot_count; ++slot) {
    slots_[slot].start_tick =
        static_cast<std::int64_t>(slot) * std::max(progress.skew_steps, 0) / slot_count;
  }
  unfinished_slots_ = slot_count;
  idle_slots_ = slot_count;
}

bool WavefrontInterleaving::next_tick(std::vector<TileAccess>& accesses) {
  accesses.clear();
  if (unfinished_slots_ == 0) return false;
  finishing_.clear();

  // Free slots take their next tile in slot order (the order their claims reach the counter).
  if (idle_slots_ > 0) {
    for (int index = 0; index < static_cast<int>(slots_.size()); ++index) {
      Slot& slot = slots_[index];
      if (slot.running || slot.finished || tick_ < slot.start_tick) continue;
      --idle_slots_;
      const std::optional<TileAssignment> assignment = dispenser_.next(index);
      if (!assignment) {
        slot.finished = true;
        --unfinished_slots_;
        continue;
      }
      const TileCoordinate coordinate =
          tile_coordinate(assignment->linear_tile, shape_, swizzle_, head_group_);
      slot.batch_head = coordinate.batch_head;
      slot.kv_batch_head = kv_batch_head_of(shape_, coordinate.batch_head);
      slot.q_tile = coordinate.q_tile;
      slot.steps = kv_steps_of(shape_, coordinate.q_tile);
      slot.step = 0;
      slot.round = assignment->round;
      slot.running = true;
      accesses.push_back({TensorKind::q, index, slot.batch_head, slot.q_tile, 1});
      if (slot.steps == 0) {  // every row sees no key (bottom-right, S_q > S_kv): O is 0 at once
        slot.running = false;
        ++idle_slots_;
        finishing_.push_back(index);
      }
    }
  }

  // One K/V step of every running CTA; consecutive slots on the same tile form one run.
  const std::size_t first_k = accesses.size();
  for (int index = 0; index < static_cast<int>(slots_.size()); ++index) {
    Slot& slot = slots_[index];
    if (!slot.running) continue;
    const int tile = kv_tile_at(order_, slot.step, slot.steps, slot.round);
    TileAccess* last = accesses.size() > first_k ? &accesses.back() : nullptr;
    // Query heads of one K/V head read the same K/V tiles: consecutive slots on one merge.
    if (last && last->tile == tile && last->batch_head == slot.kv_batch_head &&
        last->slot + last->count == index) {
      ++last->count;
    } else {
      accesses.push_back({TensorKind::k, index, slot.kv_batch_head, tile, 1});
    }
    ++kv_steps_done_;
    if (++slot.step == slot.steps) {
      slot.running = false;
      ++idle_slots_;
      finishing_.push_back(index);
    }
  }
  const std::size_t end_k = accesses.size();
  for (std::size_t i = first_k; i < end_k; ++i) {
    TileAccess value = accesses[i];
    value.tensor = TensorKind::v;
    accesses.push_back(value);
  }
  for (int index : finishing_) {
    const Slot& slot = slots_[index];
    accesses.push_back({TensorKind::o, index, slot.batch_head, slot.q_tile, 1});
  }
  ++tick_;
  return true;
}

TileAddressMap::TileAddressMap(const ScheduleShape& shape, std::int64_t row_bytes, int sector_bytes)
    : row_bytes_(row_bytes), sectors_per_row_(row_bytes / sector_bytes) {
  constexpr std::uint64_t kAlignment = 4096;  // allocations start on a page, as cudaMalloc's do
  std::uint64_t next_base = 0;
  for (TensorKind kind : {TensorKind::q, TensorKind::k, TensorKind::v, TensorKind::o}) {
    Tensor& tensor = tensors_[static_cast<int>(kind)];
    const bool kv = kind == TensorKind::k || kind == TensorKind::v;
    const int heads = kv ? shape.kv_batch_heads : shape.batch_heads;
    tensor.seq = kv ? shape.seq_kv : shape.seq_q;
    tensor.rows_per_tile = kv ? shape.tile.block_n : shape.tile.block_m;
    tensor.tiles_per_head = kv ? shape.kv_tiles : shape.q_tiles;
    tensor.last_tile_rows = tensor.seq - (tensor.tiles_per_head - 1) * tensor.rows_per_tile;
    tensor.first_number = tile_count_;
    tile_count_ += tensor.tiles_per_head * heads;
    tensor.base_byte = next_base;
    const std::uint64_t bytes = static_cast<std::uint64_t>(heads) * tensor.seq * row_bytes;
    next_base = (next_base + bytes + kAlignment - 1) / kAlignment * kAlignment;
  }
}

std::uint64_t TileAddressMap::first_byte(const TileAccess& access) const {
  const Tensor& tensor = tensors_[static_cast<int>(access.tensor)];
  const std::int64_t row = static_cast<std::int64_t>(access.batch_head) * tensor.seq +
                           access.tile * tensor.rows_per_tile;
  return tensor.base_byte + static_cast<std::uint64_t>(row * row_bytes_);
}

}  // namespace swr::model
