// The kernel's schedule replayed on the host, for the L2 simulator: which (batch, head, q tile) a
// CTA takes in which round and which K/V tile it reads at each step; how the CTAs resident at once
// interleave those reads (the progress model); and where each tile lives in memory. The schedule's
// rules are not copied here: they are templates/attention/attention_schedule.cuh, the code the
// kernel runs, called with the host's config types.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "model/closed_form_traffic.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "templates/attention/attention_schedule.cuh"

namespace swr::model {

// The host's knob types as the schedule templates spell them (the same enumerators).
attention::TileSwizzle schedule_swizzle(TileSwizzle swizzle);
attention::KvOrder schedule_order(KvOrder order);

// The tile grid of one problem.
struct ScheduleShape {
  int batch_heads = 0;     // (batch, query head) pairs
  int heads = 1;           // query heads per batch
  int kv_heads = 1;        // K/V heads per batch (heads for multi-head attention)
  int kv_batch_heads = 0;  // (batch, K/V head) pairs
  int seq_q = 0;
  int seq_kv = 0;
  TileShape tile;
  int q_tiles = 0;   // per (batch, head)
  int kv_tiles = 0;  // per (batch, head), all of them
  bool causal = false;
  int causal_shift = 0;          // query row i sees keys j <= i + causal_shift
  std::int64_t total_tiles = 0;  // q_tiles * batch_heads

  static ScheduleShape of(const AttentionProblem& problem, TileShape tile);
};

// The (batch, K/V head) pair whose K and V the (batch, query head) pair `batch_head` reads
// (attention::kv_head_of, the kernels' rule).
int kv_batch_head_of(const ScheduleShape& shape, int batch_head);

struct TileCoordinate {
  int batch_head = 0;
  int q_tile = 0;
  bool operator==(const TileCoordinate&) const = default;
};

// attention::tile_coord: linear tile index -> (batch*heads + head, q tile), with the q tiles of a
// head reversed for causal (longest rows first).
TileCoordinate tile_coordinate(std::int64_t linear_tile, const ScheduleShape& shape,
                               TileSwizzle swizzle, int head_group);

// Steps (K/V tiles) the Q tile computes: all, or for causal up to its last valid row.
int kv_steps_of(const ScheduleShape& shape, int q_tile);

// attention::kv_tile_at: the K/V tile read at `step`; sawtooth walks backwards on odd rounds.
int kv_tile_at(KvOrder order, int step, int kv_steps, int round);

struct TileAssignment {
  std::int64_t linear_tile = 0;
  int round = 0;  // what the sawtooth order flips on
};

// for_each_tile<Persistence> on the host, by attention_schedule.cuh's persistence rules. A slot
// is a CTA resident on the GPU; call next(slot) each time that slot is free, in the order the
// slots free up.
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
  std::int64_t next_cta_ = 0;    // grid: the next blockIdx to start
  std::int64_t next_claim_ = 0;  // dynamic: the tile counter
  std::vector<int> slot_round_;  // tiles the slot's CTA has taken
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

// How the CTAs resident on the GPU interleave their tile reads: the progress model.
//
// Time advances in ticks. In one tick every running CTA does one K/V step: the paper (§3.4) found
// the CTAs of a wave progressing in near lock-step, which is what lets the later CTAs of a wave hit
// the tiles the first ones brought in. A CTA starting a tile reads its Q tile in that tick's first
// step; a CTA finishing one writes its O tile at the end of the tick, and takes its next tile (from
// TileDispenser, in slot order) at the start of the next tick. Tiles of different lengths (causal)
// therefore drift apart exactly as an event-driven queue would let them.
// Within a tick the reads are issued as: Q tiles of CTAs starting, the K tiles of all running CTAs,
// their V tiles, the O tiles of CTAs finishing (slot order within each group): the wave loads K
// before V, as each CTA does.
// Skew: CTA slot s starts s * skew_steps / slots ticks late, a linear spread across the wave such
// as a block scheduler launching CTAs one by one creates; 0 is strict lock-step.
enum class TensorKind : std::uint8_t { q, k, v, o };

// Whole-tile reads (or, for O, writes) of `count` CTAs in consecutive slots, one after another:
// slots slot .. slot+count-1 all read this tile. Runs are how the lock-step wave stays cheap to
// replay: a wave of CTAs on one head reads each K/V tile as one run.
struct TileAccess {
  TensorKind tensor = TensorKind::q;
  int slot = 0;        // the first CTA slot (which SM, hence which L2 partition, it runs on)
  int batch_head = 0;  // Q and O: (batch, query head); K and V: (batch, K/V head)
  int tile = 0;        // q tile for Q and O, kv tile for K and V
  int count = 1;       // consecutive slots reading it
};

struct ProgressModel {
  int skew_steps = 0;  // spread of the CTAs' start times across the wave, in K/V steps
};

class WavefrontInterleaving {
 public:
  WavefrontInterleaving(const ScheduleShape& shape, const AttentionConfig& config, int wave_size,
                        int cta_limit, ProgressModel progress);

  // The next tick's accesses in issue order (replacing `accesses`), consecutive slots reading the
  // same tile merged into one run; false once every CTA is done.
  bool next_tick(std::vector<TileAccess>& accesses);

  std::int64_t ticks() const { return tick_; }
  std::int64_t kv_steps_done() const { return kv_steps_done_; }
  int slot_count() const { return dispenser_.slot_count(); }

 private:
  struct Slot {
    std::int64_t start_tick = 0;
    int batch_head = 0;
    int kv_batch_head = 0;
    int q_tile = 0;
    int steps = 0;  // K/V steps of the current tile
    int step = 0;
    int round = 0;
    bool running = false;
    bool finished = false;
  };

  ScheduleShape shape_;
  KvOrder order_;
  TileSwizzle swizzle_;
  int head_group_;
  TileDispenser dispenser_;
  std::vector<Slot> slots_;
  std::vector<int> finishing_;  // slots whose tile ends this tick
  int unfinished_slots_ = 0;
  int idle_slots_ = 0;  // neither running nor finished
  std::int64_t tick_ = 0;
  std::int64_t kv_steps_done_ = 0;
};

// Where each tile of Q, K, V and O lives: a dense number for the tile caches, its weight in
// sectors (valid rows only), and its byte range for the sector-level replay. Tensors are
// [B, H, S, D] contiguous (K and V: [B, H_kv, S_kv, D]), laid out one after another in a virtual
// address space.
class TileAddressMap {
 public:
  TileAddressMap(const ScheduleShape& shape, std::int64_t row_bytes, int sector_bytes);

  std::int64_t tile_count() const { return tile_count_; }
  std::int32_t tile_number(const TileAccess& access) const {
    const Tensor& tensor = tensors_[static_cast<int>(access.tensor)];
    return static_cast<std::int32_t>(
        tensor.first_number + static_cast<std::int64_t>(access.batch_head) * tensor.tiles_per_head +
        access.tile);
  }
  std::int64_t valid_rows(const TileAccess& access) const {
    const Tensor& tensor = tensors_[static_cast<int>(access.tensor)];
    return access.tile == tensor.tiles_per_head - 1 ? tensor.last_tile_rows : tensor.rows_per_tile;
  }
  std::int32_t sectors(const TileAccess& access) const {
    return static_cast<std::int32_t>(valid_rows(access) * sectors_per_row_);
  }
  std::uint64_t first_byte(const TileAccess& access) const;
  std::int64_t byte_count(const TileAccess& access) const {
    return valid_rows(access) * row_bytes_;
  }

 private:
  struct Tensor {
    std::int64_t first_number = 0;
    std::int64_t tiles_per_head = 0;
    std::int64_t rows_per_tile = 0;
    std::int64_t last_tile_rows = 0;
    std::int64_t seq = 0;
    std::uint64_t base_byte = 0;
  };
  std::array<Tensor, 4> tensors_;
  std::int64_t tile_count_ = 0;
  std::int64_t row_bytes_;
  std::int64_t sectors_per_row_;
};

}  // namespace swr::model
