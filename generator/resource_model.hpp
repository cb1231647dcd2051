// What one CTA of a kernel needs (threads, shared memory, registers) and how many fit on an SM of
// a GPU, for every family: the occupancy rules they share, then each family's tile rules and
// estimates (attention's mma.sync tile layer, the GEMM template of templates/gemm/), checked
// before compiling.
#pragma once

#include <string>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {

inline constexpr int kWarpSize = 32;
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr int kMaxRegistersPerThread = 255;

struct ResourceUse {
  int threads_per_block = 0;
  int dynamic_shared_bytes = 0;
  int estimated_registers = 0;  // per thread, before compiling (or the compiler's count)
  int blocks_per_sm = 0;        // occupancy limit from shared memory, threads, registers
  std::string limited_by;       // "shared memory", "registers", "threads", ...
  std::string does_not_fit;     // empty when runnable, else a one-line reason
};

// One CTA's demands, as a family's model states them.
struct CtaDemand {
  int warps = 0;
  int dynamic_shared_bytes = 0;
  int registers = 0;                // per thread
  bool registers_estimated = true;  // false: the compiler's count
  std::string tile_problem;         // why the family's template cannot take the config, or empty
};

// The family's tile problem first, then threads, shared memory and registers against the limits,
// then how many CTAs fit on one SM and what limits them.
ResourceUse cta_resource_use(const CtaDemand& demand, const GpuProfile& gpu);

// The attention family.
ResourceUse attention_resource_use(const AttentionProblem& problem, const AttentionConfig& config,
                                   const GpuProfile& gpu);

// (block_m + 2 * stages * block_n) rows: the Q tile and `stages` K and V tiles. mma_sync: rows of
// mma_sync_tile_row_bytes; wgmma: head_dim * element bytes + the P tiles of p_in_smem + 1024 for
// the swizzle alignment + 256 for the mbarriers and the tile queue.
int attention_dynamic_shared_bytes(const AttentionProblem& problem, const AttentionConfig& config);
// wgmma: the width in 16-bit columns of the shared-memory chunks Q, K and V are stored in (and of
// the TMA boxes that load them), each swizzled over its row of 2 * width bytes: the widest of 64,
// 32, 16 that divides the head dim (templates/attention/sm90/traits.cuh kChunkColumns).
int wgmma_attention_chunk_columns(int head_dim);
// A row of an mma_sync shared-memory tile: head_dim * 2 bytes, plus one 16-byte chunk of padding
// when head_dim is not a multiple of 64 (templates/common/swizzled_tile.cuh).
int mma_sync_tile_row_bytes(int head_dim);
// wgmma with p_in_smem: each consumer warpgroup's P, 64 rows x block_n rounded up to 64 keys, in
// 16-bit elements (0 otherwise): consumer_warpgroups * ceil(block_n / 64) * 8192 bytes.
int wgmma_p_shared_bytes(const AttentionConfig& config);

// wgmma variants: the registers setmaxnreg gives a consumer thread (240 with 2 consumer
// warpgroups, 160 with 3), and what one needs by estimate (O and S accumulators, P when the
// overlap keeps it in registers next to S, + bookkeeping).
int wgmma_consumer_registers(const AttentionConfig& config);
int estimate_wgmma_consumer_registers(const AttentionProblem& problem,
                                      const AttentionConfig& config);

// Registers per thread before compiling: the O and S accumulators one lane holds, plus addresses
// and softmax state (wgmma: the entry cap of 384 or 512 threads, before setmaxnreg).
int estimate_attention_registers(const AttentionProblem& problem, const AttentionConfig& config);

// Same, with the register count the compiler reported instead of the estimate.
ResourceUse attention_resource_use(const AttentionProblem& problem, const AttentionConfig& config,
                                   const GpuProfile& gpu, int compiled_registers);

// The GEMM family.
// stages x (A tile block_m x block_k + B tile block_k x block_n) x 2 bytes.
int gemm_dynamic_shared_bytes(const GemmConfig& config);

// Registers per thread before compiling: the fp32 accumulators of the warp tile, two sets of
// operand fragments (double buffering), addresses and counters.
int estimate_gemm_registers(const GemmConfig& config);

// Why the template cannot be instantiated with this config (empty when it can): the static_asserts
// of templates/gemm/*.cuh, said in words.
std::string gemm_shape_problem(const GemmConfig& config);

// The instruction path's target rule (wgmma needs sm_90a), shape rules, then threads, shared
// memory, registers and occupancy on `gpu`. The compiled
// register count replaces the estimate when given.
ResourceUse gemm_resource_use(const GemmConfig& config, const GpuProfile& gpu,
                              int compiled_registers = -1);

}  // namespace swr
