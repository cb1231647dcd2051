// `--shard I/N`: one of N independent jobs (a Slurm job array, any batch system) that together
// tune a plan, each into its own database, merged afterwards with `swr-tune import`. The split is
// deterministic: the plan's work units (an attention variant; a GEMM kernel binary with all its
// swizzle variants, which share one compile) are numbered in plan order and dealt round-robin, unit
// u to shard u mod N. Every job that reads the same plan with the same build on the same GPU kind
// sees the same units, so the shards are disjoint and together cover the plan.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tuner/tuning/gemm_tuning_session.hpp"
#include "tuner/tuning/tuning_session.hpp"

namespace swr {

inline constexpr int kMaximumShards = 4096;

struct Shard {
  int index = 0;  // counted from 0, as $SLURM_ARRAY_TASK_ID with --array=0-(N-1)
  int count = 1;

  bool owns(std::size_t unit) const {
    return unit % static_cast<std::size_t>(count) == static_cast<std::size_t>(index);
  }
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "I/N" with 0 <= I < N <= kMaximumShards; UsageError for anything else.
Shard parse_shard(const std::string& text);

// Which of `unit_keys` the shard keeps, continuing the plan's unit count at `next_unit` (advanced
// past this list's units). Equal keys are one unit, numbered where the key first appears.
std::vector<bool> keep_in_shard(const Shard& shard, const std::vector<std::string>& unit_keys,
                                std::size_t& next_unit);

// Removes from each shape the configs another shard tunes, and then the shapes left empty.
// `unit_key(shape, config)` names the config's unit.
template <class Shape, class UnitKey>
void apply_shard(const Shard& shard, std::vector<Shape>& shapes, std::size_t& next_unit,
                 UnitKey unit_key) {
  std::vector<Shape> kept;
  for (Shape& shape : shapes) {
    std::vector<std::string> keys;
    for (const auto& config : shape.configs) keys.push_back(unit_key(shape, config));
    const std::vector<bool> keep = keep_in_shard(shard, keys, next_unit);
    decltype(shape.configs) configs;
    for (std::size_t i = 0; i < keep.size(); ++i) {
      if (keep[i]) configs.push_back(shape.configs[i]);
    }
    if (configs.empty()) continue;
    shape.configs = std::move(configs);
    kept.push_back(std::move(shape));
  }
  shapes = std::move(kept);
}

struct ShardedPlan {
  std::size_t units = 0;     // the plan's work units, all shards together
  std::size_t variants = 0;  // the variants this shard kept
};

// Keeps in `attention` and `gemm` what this shard tunes: attention variants are units of their
// own, GEMM variants of one kernel binary (the same cubin, another swizzle) one unit, numbered
// attention first, then GEMM, in plan order.
ShardedPlan keep_shard(const Shard& shard, std::vector<TuningShape>& attention,
                       std::vector<GemmTuningShape>& gemm);

}  // namespace swr
