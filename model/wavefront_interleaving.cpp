#include "model/wavefront_interleaving.hpp"

#include <algorithm>

namespace swr::model {

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
      slot.q_tile = coordinate.q_tile;
      slot.steps = kv_steps_of(shape_, coordinate.q_tile);
      slot.step = 0;
      slot.round = assignment->round;
      slot.running = true;
      accesses.push_back({TensorKind::q, index, slot.batch_head, slot.q_tile, 1});
    }
  }

  // One K/V step of every running CTA; consecutive slots on the same tile form one run.
  const std::size_t first_k = accesses.size();
  finishing_.clear();
  for (int index = 0; index < static_cast<int>(slots_.size()); ++index) {
    Slot& slot = slots_[index];
    if (!slot.running) continue;
    const int tile = kv_tile_at(order_, slot.step, slot.steps, slot.round);
    TileAccess* last = accesses.size() > first_k ? &accesses.back() : nullptr;
    if (last && last->tile == tile && last->batch_head == slot.batch_head &&
        last->slot + last->count == index) {
      ++last->count;
    } else {
      accesses.push_back({TensorKind::k, index, slot.batch_head, tile, 1});
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

}  // namespace swr::model
