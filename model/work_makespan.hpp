// How long the busiest CTA slot works, in units of one step of the kernel's main loop (a K/V tile
// of attention, a k block of GEMM): the tiles of a problem handed to the CTAs resident at once by
// the variant's persistence rule, each CTA running its tiles one after another. The compute part
// of the time model is this makespan times the time of one step (model/time_model.hpp), so wave
// quantization, causal tiles of unequal length and persistence are counted, not fitted.
#pragma once

#include <cstdint>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr::model {

struct WorkMakespan {
  double busiest_slot_steps = 0;  // the makespan
  double total_steps = 0;         // every tile's steps together
  std::int64_t tiles = 0;
  int slots = 0;  // CTAs resident at once that the schedule used
};

// Attention: tiles in the kernel's order (attention_schedule.cuh through schedule_replay), each
// as long as its K/V steps; `slots` CTAs resident (SMs x CTAs per SM). grid and dynamic hand the
// next tile to the slot that frees first, static keeps its fixed stride.
WorkMakespan attention_makespan(const AttentionProblem& problem, const AttentionConfig& config,
                                int slots);

// GEMM: output tiles (cluster tiles for a cluster) of k blocks each; grid and dynamic as above,
// static the fixed stride, stream-K whole waves static and the last partial wave's k blocks split
// evenly over every slot. `slots` counts CTAs; a cluster of c CTAs takes c of them.
WorkMakespan gemm_makespan(const GemmProblem& problem, const GemmConfig& config, int slots);

}  // namespace swr::model
