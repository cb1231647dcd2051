// What one CTA of a variant needs (shared memory, threads, registers) and how many fit on an SM.
#pragma once

#include <string>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {

struct ResourceUse {
  int threads_per_block = 0;
  int dynamic_shared_bytes = 0;  // Q tile + stages x (K tile + V tile)
  int estimated_registers = 0;   // per thread, before compiling (accumulators + fragments)
  int blocks_per_sm = 0;         // occupancy limit from shared memory, threads, registers
  std::string limited_by;        // "shared memory", "registers", "threads", ...
  std::string does_not_fit;      // empty when runnable, else a one-line reason
};

ResourceUse attention_resource_use(const AttentionProblem& problem, const AttentionConfig& config,
                                   const GpuProfile& gpu);

// (block_m + 2 * stages * block_n) * head_dim * element bytes: the Q tile and `stages` K and V
// tiles.
int attention_dynamic_shared_bytes(const AttentionProblem& problem, const AttentionConfig& config);

// Registers per thread before compiling: the O and S accumulators one lane holds, plus addresses
// and softmax state.
int estimate_attention_registers(const AttentionProblem& problem, const AttentionConfig& config);

// Same, with the register count the compiler reported instead of the estimate.
ResourceUse attention_resource_use(const AttentionProblem& problem, const AttentionConfig& config,
                                   const GpuProfile& gpu, int compiled_registers);

}  // namespace swr
