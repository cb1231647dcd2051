// The schedule simulator: replays a variant's exact tile schedule (schedule_replay), with the
// CTAs interleaved by the progress model (schedule_replay), through an LRU model of the
// profile's L2, and counts what the counters would: sectors requested, misses, DRAM bytes.
//
// Cache model. Default: whole tiles in a fully associative LRU (cache_models: exact for LRU as
// long as each tile's sectors are read together), fast enough for B=8, S=128K in well under a
// second per variant. `sector` and `line` replay every sector through cache_models' LruSectorCache,
// optionally set associative: exact at address level, for checking the tile model on small
// problems.
//
// Partitions (sm_90). Each of the profile's l2_partitions is its own LRU of l2_bytes/partitions;
// CTA slot s runs on partition s % partitions; a partition sees the reads of its own CTAs, so data
// every SM reads (K, V) lives in each partition once. DRAM is read once per sector that misses in a
// tick. What the counters add for the other partitions' misses of that sector:
//  - missing it in the same tick: (l2_shared_miss_factor - 1) / (partitions - 1) per sector
//    (bench/results/h200-l2-streaming: 1.43 counted misses per missing shared sector), or
//    (l2_first_touch_miss_factor - 1) / (partitions - 1) in the tick the tile is first read;
//  - missing it later while another partition holds it: l2_peer_fill_miss_weight per sector, no
//    DRAM read (the copy comes from the peer).
//
// Budget. Past `max_kv_steps` CTA steps the replay stops and extrapolates per tensor: compulsory
// misses exactly (closed form) times the simulated misses per first touch, the rest at the
// simulated miss rate of re-reads. `sampled` and `note` say so. A replay that would need more than
// `max_memory_bytes` (or, for sector replay, more than `max_sector_accesses`) is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/closed_form_traffic.hpp"
#include "model/schedule_replay.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::model {

enum class CacheGranularity { tile, sector, line };

struct SimulationOptions {
  CacheGranularity granularity = CacheGranularity::tile;
  int line_bytes = 128;  // line granularity only
  int ways = 0;          // sector/line granularity only; 0: fully associative
  ProgressModel progress;
  int wave_size = 0;  // CTAs resident at once; 0: sm_count x blocks_per_sm (resource model)
  int cta_limit = 0;  // > 0: cap the persistent grid, as the launcher's persistent_ctas does
  bool model_partitions = true;  // false: one L2 of l2_bytes, whatever the profile says
  // Overrides the profile's l2_first_touch_miss_factor (e.g. for a bare streaming kernel).
  std::optional<double> first_touch_miss_factor;
  std::int64_t max_kv_steps = 100'000'000;  // about 1-2 s of replay
  std::int64_t max_memory_bytes = std::int64_t{1} << 30;
  std::int64_t max_sector_accesses = 400'000'000;
};

struct SimulationResult {
  TensorSectors requested;   // whole problem, equal to the closed form
  TensorSectors compulsory;  // closed form
  TensorSectors misses;      // as the L2 counters count them
  std::int64_t dram_bytes_read = 0;
  std::int64_t dram_bytes_written = 0;  // every O sector once
  double hit_rate = 0;                  // 1 - misses / requested
  int wave_size = 0;
  int resident_ctas = 0;  // CTA slots the schedule used
  int partitions = 1;
  std::int64_t partition_bytes = 0;  // capacity of each partition's LRU
  std::int64_t kv_steps_total = 0;
  std::int64_t kv_steps_simulated = 0;
  bool sampled = false;
  std::string note;  // how it was computed: cache model, partitions, sampling, tails

  std::int64_t requested_sectors() const { return requested.total(); }
  std::int64_t miss_sectors() const { return misses.total(); }
};

// Throws UsageError for an invalid problem, profile or tile, a config that does not fit the GPU,
// or a replay over the memory or access budget.
SimulationResult simulate_l2(const AttentionProblem& problem, const AttentionConfig& config,
                             const GpuProfile& gpu, const SimulationOptions& options = {});

const char* to_string(CacheGranularity granularity);

}  // namespace swr::model
