#include "tuner/shard.hpp"

#include <charconv>
#include <map>

#include "generator/gemm_kernel_source.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

bool read_number(const std::string& text, int& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return !text.empty() && error == std::errc() && stop == end;
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  Shard shard;
  const bool read = slash != std::string::npos && read_number(text.substr(0, slash), shard.index) &&
                    read_number(text.substr(slash + 1), shard.count);
  if (!read || shard.count < 1 || shard.count > kMaximumShards || shard.index < 0 ||
      shard.index >= shard.count) {
    throw UsageError("bad --shard '" + text +
                     "': allowed I/N with 0 <= I < N <= " + std::to_string(kMaximumShards) +
                     " (shard I of N counted from 0, e.g. $SLURM_ARRAY_TASK_ID/"
                     "$SLURM_ARRAY_TASK_COUNT with --array=0-(N-1))");
  }
  return shard;
}

std::vector<bool> keep_in_shard(const Shard& shard, const std::vector<std::string>& unit_keys,
                                std::size_t& next_unit) {
  std::map<std::string, std::size_t> units;
  std::vector<bool> keep;
  for (const std::string& key : unit_keys) {
    const auto [found, inserted] = units.emplace(key, next_unit);
    if (inserted) ++next_unit;
    keep.push_back(shard.owns(found->second));
  }
  return keep;
}

ShardedPlan keep_shard(const Shard& shard, std::vector<TuningShape>& attention,
                       std::vector<GemmTuningShape>& gemm) {
  ShardedPlan sharded;
  apply_shard(shard, attention, sharded.units,
              [](const TuningShape& shape, const AttentionConfig& config) {
                return shape.problem.key() + "/" + config.key();
              });
  apply_shard(shard, gemm, sharded.units,
              [](const GemmTuningShape& shape, const GemmConfig& config) {
                return shape.problem.key() + "/" + gemm_binary_name(shape.problem, config);
              });
  for (const TuningShape& shape : attention) sharded.variants += shape.configs.size();
  for (const GemmTuningShape& shape : gemm) sharded.variants += shape.configs.size();
  return sharded;
}

}  // namespace swr
