// The attention variant space for one problem on one GPU: enumerate every knob combination,
// drop what the target cannot run (resource model) or what is redundant for the problem.
#pragma once

#include <vector>

#include "generator/variant_space.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {

using PrunedConfig = Pruned<AttentionConfig>;
using AttentionSpace = SpaceOf<AttentionConfig>;

// Every knob value the generator knows, before pruning.
std::vector<AttentionConfig> enumerate_attention_configs(const AttentionProblem& problem,
                                                         const GpuProfile& gpu);

AttentionSpace build_attention_space(const AttentionProblem& problem, const GpuProfile& gpu);

// Head-group size (in (batch, query head) pairs) whose K/V fits in the part of the L2 that shared
// data can use: the K/V heads that fit (at least one) times the query heads per K/V head, so a
// GQA group always holds whole K/V heads' query heads.
int head_group_fitting_l2(const AttentionProblem& problem, const GpuProfile& gpu);

}  // namespace swr
