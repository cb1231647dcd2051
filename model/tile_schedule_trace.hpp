// The kernel's schedule replayed on the host: which (batch, head, q tile) a CTA takes in which
// round (templates/attention/tile_schedule.cuh) and which K/V tile it reads at each step
// (templates/attention/kv_order.cuh, forward_tile.cuh). Every function here mirrors one device
// function; a change there must be made here too, or the model predicts another kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/closed_form_traffic.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"

namespace swr::model {

// The tile grid of one problem.
struct ScheduleShape {
  int batch_heads = 0;
  int seq_q = 0;
  int seq_kv = 0;
  TileShape tile;
  int q_tiles = 0;   // per (batch, head)
  int kv_tiles = 0;  // per (batch, head), all of them
  bool causal = false;
  std::int64_t total_tiles = 0;  // q_tiles * batch_heads

  static ScheduleShape of(const AttentionProblem& problem, TileShape tile);
};

struct TileCoordinate {
  int batch_head = 0;
  int q_tile = 0;
  bool operator==(const TileCoordinate&) const = default;
};

// tile_coord<Swizzle, HeadGroup, Causal>: linear tile index -> (batch*heads + head, q tile),
// with the q tiles of a head reversed for causal (longest rows first).
TileCoordinate tile_coordinate(std::int64_t linear_tile, const ScheduleShape& shape,
                               TileSwizzle swizzle, int head_group);

// Steps (K/V tiles) the Q tile computes: all, or for causal up to its last valid row.
int kv_steps_of(const ScheduleShape& shape, int q_tile);

// kv_tile_at<Order>: the K/V tile read at `step`; sawtooth walks backwards on odd rounds.
int kv_tile_at(KvOrder order, int step, int kv_steps, int round);

struct TileAssignment {
  std::int64_t linear_tile = 0;
  int round = 0;  // what the sawtooth order flips on
};

// for_each_tile<Persistence> on the host. A slot is a CTA resident on the GPU; call next(slot)
// each time that slot is free, in the order the slots free up.
//  grid:    one CTA per tile, wave_size slots; a freed slot runs the next CTA in blockIdx order;
//           round = tile / wave_size.
//  static:  min(tiles, wave_size) CTAs; CTA c runs tiles c, c+G, c+2G, ...; round = tiles done.
//  dynamic: min(tiles, wave_size) CTAs; CTA c runs tile c, then claims counter++ + G (first come
//           first served); round = tiles done.
class TileDispenser {
 public:
  // `cta_limit` > 0 caps the persistent grid (the launcher's persistent_ctas).
  TileDispenser(Persistence persistence, std::int64_t total_tiles, int wave_size,
                int cta_limit = 0);

  int slot_count() const { return slot_count_; }
  std::int64_t cta_count() const;
  std::optional<TileAssignment> next(int slot);

 private:
  Persistence persistence_;
  std::int64_t total_tiles_;
  int wave_size_;
  int slot_count_;
  std::int64_t next_unclaimed_;          // grid: next blockIdx; dynamic: counter + G
  std::vector<std::int64_t> slot_tile_;  // static: the slot's next tile
  std::vector<int> slot_round_;          // tiles the slot's CTA has taken
};

// One K or V tile read of a CTA, in the order the CTA issues them.
struct KvRead {
  int round = 0;
  TileCoordinate tile;
  int kv_tile = 0;
  bool operator==(const KvRead&) const = default;
};

// The reads of one CTA under static persistence, whose tiles do not depend on timing. For tests
// and for checking the schedule by eye; at most `limit` reads.
std::vector<KvRead> static_cta_reads(const ScheduleShape& shape, const AttentionConfig& config,
                                     int wave_size, int cta, std::size_t limit);

}  // namespace swr::model
