// What one CTA of an attention variant needs (shared memory, threads, registers), how many fit on
// an SM (cta_occupancy.hpp, shared with the GEMM family), and the shape rules of the mma.sync tile
// layer, checked before compiling.
#pragma once

#include "generator/cta_occupancy.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {

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
