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
#pragma once

#include <cstdint>
#include <vector>

#include "model/tile_schedule_trace.hpp"
#include "swr/attention_config.hpp"

namespace swr::model {

enum class TensorKind : std::uint8_t { q, k, v, o };

// Whole-tile reads (or, for O, writes) of `count` CTAs in consecutive slots, one after another:
// slots slot .. slot+count-1 all read this tile. Runs are how the lock-step wave stays cheap to
// replay: a wave of CTAs on one head reads each K/V tile as one run.
struct TileAccess {
  TensorKind tensor = TensorKind::q;
  int slot = 0;  // the first CTA slot (which SM, hence which L2 partition, it runs on)
  int batch_head = 0;
  int tile = 0;   // q tile for Q and O, kv tile for K and V
  int count = 1;  // consecutive slots reading it
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

}  // namespace swr::model
