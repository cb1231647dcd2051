// What one CTA of a GEMM variant needs (shared memory, threads, registers), how many fit on an SM
// (cta_occupancy.hpp, shared with the attention family), and the shape rules of the mma.sync
// template (templates/gemm/), checked before compiling.
#pragma once

#include <string>

#include "generator/cta_occupancy.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {

// stages x (A tile block_m x block_k + B tile block_k x block_n) x 2 bytes.
int gemm_dynamic_shared_bytes(const GemmConfig& config);

// Registers per thread before compiling: the fp32 accumulators of the warp tile, two sets of
// operand fragments (double buffering), addresses and counters.
int estimate_gemm_registers(const GemmConfig& config);

// Why the template cannot be instantiated with this config (empty when it can): the static_asserts
// of templates/gemm/*.cuh, said in words.
std::string gemm_shape_problem(const GemmConfig& config);

// Shape rules, then threads, shared memory, registers and occupancy on `gpu`. The compiled
// register count replaces the estimate when given.
ResourceUse gemm_resource_use(const GemmConfig& config, const GpuProfile& gpu,
                              int compiled_registers = -1);

}  // namespace swr
