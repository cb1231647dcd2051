#include "generator/resource_model.hpp"

#include "swr/instruction_path.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace swr {

namespace {

// Registers are allocated per warp in units of 8 per thread (256 per warp).
constexpr int kRegisterAllocationUnit = 8;

int round_up(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

ResourceUse cta_resource_use(const CtaDemand& demand, const GpuProfile& gpu) {
  const int registers = demand.registers;
  ResourceUse use;
  use.threads_per_block = demand.warps * kWarpSize;
  use.dynamic_shared_bytes = demand.dynamic_shared_bytes;
  use.estimated_registers = registers;

  use.does_not_fit = demand.tile_problem;
  if (use.does_not_fit.empty() && use.threads_per_block > kMaxThreadsPerBlock) {
    use.does_not_fit = "needs " + std::to_string(use.threads_per_block) +
                       " threads per CTA, at most " + std::to_string(kMaxThreadsPerBlock);
  }
  if (use.does_not_fit.empty() && use.dynamic_shared_bytes > gpu.shared_memory_per_block_optin) {
    use.does_not_fit = "needs " + std::to_string(use.dynamic_shared_bytes) +
                       " B of shared memory per CTA, " + gpu.name + " allows " +
                       std::to_string(gpu.shared_memory_per_block_optin);
  }
  if (use.does_not_fit.empty() && registers > kMaxRegistersPerThread) {
    use.does_not_fit = std::string("needs ") + (demand.registers_estimated ? "an estimated " : "") +
                       std::to_string(registers) + " registers per thread, at most " +
                       std::to_string(kMaxRegistersPerThread);
  }
  if (!use.does_not_fit.empty()) return use;

  const int shared_per_block = use.dynamic_shared_bytes + gpu.reserved_shared_memory_per_block;
  const int registers_per_warp =
      round_up(std::max(registers, 1), kRegisterAllocationUnit) * kWarpSize;
  const std::vector<std::pair<int, const char*>> limits = {
      {gpu.shared_memory_per_sm / shared_per_block, "shared memory"},
      {gpu.registers_per_sm / registers_per_warp / demand.warps, "registers"},
      {gpu.max_threads_per_sm / use.threads_per_block, "threads"},
      {gpu.max_blocks_per_sm, "blocks per SM"},
  };
  const auto tightest = std::min_element(
      limits.begin(), limits.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  use.blocks_per_sm = tightest->first;
  use.limited_by = tightest->second;
  if (use.blocks_per_sm < 1) {
    use.does_not_fit =
        std::string("not one CTA fits on an SM of ") + gpu.name + " (" + tightest->second + ")";
  }
  return use;
}

// The attention family.

namespace {

// Addresses, loop counters, the running max and sum of the online softmax.
constexpr int kAttentionBookkeepingRegisters = 40;
// The wgmma kernel's: row max/sum, masks, pipeline phases, tile coordinates. Calibrated on the
// compiled matrix (every head dim 32..256, 3 consumer warpgroups at 160 registers, f16 and bf16,
// causal, every persistence): O + S (+ P while it waits for the overlapped PV in registers) of
// 128 compiles without spills, 136 spills (d80 m192n192: 1120 B; d128 m192n128-ov: 544 B).
constexpr int kWgmmaConsumerBookkeepingRegisters = 32;
// The tiles start on a 1024-byte swizzle atom; the mbarriers of the Q, K and V rings and the tile
// queue of dynamic persistence follow (templates/attention/sm90/traits.cuh kBarrierBytes).
constexpr int kWgmmaSharedAlignmentBytes = 1024;
constexpr int kWgmmaBarrierBytes = 256;
// P in shared memory: [64 rows][64 keys] chunks of 16-bit elements (traits.cuh kPChunkBytes).
constexpr int kWgmmaPChunkKeys = 64;
constexpr int kWgmmaPChunkBytes = 64 * kWgmmaPChunkKeys * 2;

// Shape rules of the mma.sync tile layer, independent of the GPU.
std::string tile_shape_problem(const AttentionConfig& config) {
  if (config.warps < 1 || config.block_m % config.warps != 0 ||
      (config.rows_per_warp() != 16 && config.rows_per_warp() != 32)) {
    return "rows per warp (block_m " + std::to_string(config.block_m) + " / warps " +
           std::to_string(config.warps) + ") must be 16 or 32";
  }
  if (config.block_n < 16 || config.block_n > 128 || config.block_n % 16 != 0) {
    return "block_n " + std::to_string(config.block_n) + " must be a multiple of 16 up to 128";
  }
  if (config.stages < 1 || config.stages > 3) {
    return "stages " + std::to_string(config.stages) + " must be 1, 2 or 3";
  }
  if (config.head_group < 1) {
    return "head_group " + std::to_string(config.head_group) + " must be at least 1";
  }
  if (config.p_in_smem || config.planted_hang) {
    return "p_in_smem and planted_hang are knobs of the wgmma path";
  }
  return {};
}

// Shape rules of the sm_90a warp-specialized kernel (the static_asserts of
// templates/attention/sm90/traits.cuh, and what it does not implement), then the consumer
// warpgroups' registers after setmaxnreg.
std::string wgmma_tile_problem(const AttentionProblem& problem, const AttentionConfig& config,
                               const GpuProfile& gpu) {
  if (std::string why = instruction_path_problem(gpu, config.path); !why.empty()) return why;
  if (config.block_m != 128 && config.block_m != 192) {
    return "block_m " + std::to_string(config.block_m) +
           " must be 128 or 192 (2 or 3 consumer warpgroups of 64 rows)";
  }
  if (config.warps != AttentionConfig::wgmma_warps(config.block_m)) {
    return "warps " + std::to_string(config.warps) + " must be " +
           std::to_string(AttentionConfig::wgmma_warps(config.block_m)) +
           " (a producer warpgroup and one consumer warpgroup per 64 rows)";
  }
  if (config.block_n < 16 || config.block_n > 256 || config.block_n % 16 != 0) {
    return "block_n " + std::to_string(config.block_n) + " must be a multiple of 16 up to 256";
  }
  if (config.stages < 1 || config.stages > 4) {
    return "stages " + std::to_string(config.stages) + " must be 1 to 4";
  }
  if (config.head_group < 1) {
    return "head_group " + std::to_string(config.head_group) + " must be at least 1";
  }
  const int needed = estimate_wgmma_consumer_registers(problem, config);
  const int granted = wgmma_consumer_registers(config);
  if (needed > granted) {
    return "a consumer thread needs an estimated " + std::to_string(needed) +
           " registers, setmaxnreg gives " + std::to_string(granted) + " with " +
           std::to_string(config.consumer_warpgroups()) + " consumer warpgroups";
  }
  return {};
}

ResourceUse resource_use(const AttentionProblem& problem, const AttentionConfig& config,
                         const GpuProfile& gpu, int registers, bool registers_estimated) {
  const std::string tile_problem =
      config.is_wgmma() ? wgmma_tile_problem(problem, config, gpu) : tile_shape_problem(config);
  return cta_resource_use({config.warps, attention_dynamic_shared_bytes(problem, config), registers,
                           registers_estimated, tile_problem},
                          gpu);
}

}  // namespace

int mma_sync_tile_row_bytes(int head_dim) {
  // templates/common/swizzled_tile.cuh: 16-byte chunks, rows of a head dim that is not a multiple
  // of 64 padded by one chunk.
  const int chunks = head_dim / 8;
  return (head_dim % 64 == 0 ? chunks : chunks + 1) * 16;
}

int attention_dynamic_shared_bytes(const AttentionProblem& problem, const AttentionConfig& config) {
  const int rows = config.block_m + 2 * config.stages * config.block_n;
  if (!config.is_wgmma()) return rows * mma_sync_tile_row_bytes(problem.head_dim);
  const int tiles = rows * problem.head_dim * static_cast<int>(element_bytes(problem.dtype));
  return tiles + wgmma_p_shared_bytes(config) + kWgmmaSharedAlignmentBytes + kWgmmaBarrierBytes;
}

int wgmma_attention_chunk_columns(int head_dim) {
  return head_dim % 64 == 0 ? 64 : head_dim % 32 == 0 ? 32 : 16;
}

int wgmma_p_shared_bytes(const AttentionConfig& config) {
  if (!config.is_wgmma() || !config.p_in_smem) return 0;
  const int chunks = (config.block_n + kWgmmaPChunkKeys - 1) / kWgmmaPChunkKeys;
  return config.consumer_warpgroups() * chunks * kWgmmaPChunkBytes;
}

int wgmma_consumer_registers(const AttentionConfig& config) {
  return config.consumer_warpgroups() == 2 ? 240 : 160;
}

int estimate_wgmma_consumer_registers(const AttentionProblem& problem,
                                      const AttentionConfig& config) {
  // fp32 accumulators of one warpgroup's 64 rows over its 128 threads: O (64 x head_dim) and S
  // (64 x block_n). P (16-bit pairs, half of S) takes S's registers once packed, except with
  // overlap in registers: P(j-1) waits for its PV wgmma while S(j) accumulates.
  constexpr int kWarpgroupThreads = 128;
  const int output = 64 * problem.head_dim / kWarpgroupThreads;
  const int scores = 64 * config.block_n / kWarpgroupThreads;
  const int p_waiting = config.overlap && !config.p_in_smem ? scores / 2 : 0;
  return output + scores + p_waiting + kWgmmaConsumerBookkeepingRegisters;
}

int estimate_attention_registers(const AttentionProblem& problem, const AttentionConfig& config) {
  // The wgmma kernel's entry cap: setmaxnreg then moves registers between the roles.
  if (config.is_wgmma()) {
    const int threads = std::max(config.threads(), 1);
    return std::min(kMaxRegistersPerThread,
                    65536 / threads / kRegisterAllocationUnit * kRegisterAllocationUnit);
  }
  const int rows = config.warps > 0 ? config.rows_per_warp() : 0;
  // fp32 accumulators of one warp spread over its 32 lanes: O (rows x head_dim), S (rows x
  // block_n).
  const int output_accumulators = rows * problem.head_dim / kWarpSize;
  const int score_accumulators = rows * config.block_n / kWarpSize;
  return output_accumulators + score_accumulators + kAttentionBookkeepingRegisters;
}

ResourceUse attention_resource_use(const AttentionProblem& problem, const AttentionConfig& config,
                                   const GpuProfile& gpu) {
  return resource_use(problem, config, gpu, estimate_attention_registers(problem, config), true);
}

ResourceUse attention_resource_use(const AttentionProblem& problem, const AttentionConfig& config,
                                   const GpuProfile& gpu, int compiled_registers) {
  return resource_use(problem, config, gpu, compiled_registers, false);
}

// The GEMM family.

namespace {

constexpr int kGemmBookkeepingRegisters = 24;  // addresses, loop counters, slots, tile coordinates
constexpr int kChunkElements = 8;              // one cp.async of 16 bytes

// OperandCopy's rule: every thread copies whole passes of rows, and each pass covers a multiple of
// the rows after which the shared-memory swizzle repeats (8, or 16 for 32-element rows).
std::string copy_problem(const char* operand, int rows, int cols, int threads) {
  const int chunks_per_row = cols / kChunkElements;
  const int rows_per_pass = threads / chunks_per_row;
  const int repeat = cols == 32 ? 16 : 8;
  if (threads % chunks_per_row != 0 || rows_per_pass % repeat != 0 || rows_per_pass < 1 ||
      rows % rows_per_pass != 0) {
    return std::string(operand) + " tile " + std::to_string(rows) + " x " + std::to_string(cols) +
           " cannot be copied in whole passes of " + std::to_string(repeat) + "k rows by " +
           std::to_string(threads) + " threads";
  }
  return {};
}

// The wgmma kernel (templates/gemm/sm90/gemm_traits_sm90.cuh): rows of a tile one consumer
// warpgroup computes, and the register count ptxas gives every variant (the 65536 / 384 cap of
// __launch_bounds__(384, 1); setmaxnreg then splits it 40 producer / 232 consumer).
int wgmma_rows_per_warpgroup(const GemmConfig& config) {
  return config.consumer_mode == GemmConsumerMode::cooperative ? config.block_m / 2
                                                               : config.block_m;
}
constexpr int kWgmmaEntryRegisters = 168;
constexpr int kWgmmaMaxSharedBytes = 232448;  // the template's static_assert (227 KB)

std::string wgmma_shape_problem(const GemmConfig& config) {
  const std::string tile = std::to_string(config.block_m) + "x" + std::to_string(config.block_n);
  if (config.block_k != 64) {
    return "block_k " + std::to_string(config.block_k) + " must be 64 for wgmma variants";
  }
  if (config.stages < 2 || config.stages > 8) {
    return "stages " + std::to_string(config.stages) + " must be 2..8 for wgmma variants";
  }
  if (config.block_n % 16 != 0 || config.block_n < 64 || config.block_n > 256) {
    return "block_n " + std::to_string(config.block_n) + " must be 64..256 in steps of 16";
  }
  if (config.block_m > 256) return "block_m " + std::to_string(config.block_m) + " exceeds 256";
  const int rows = wgmma_rows_per_warpgroup(config);
  if (rows < 64 || rows % 64 != 0) {
    return "tile " + tile + " " + std::string(to_string(config.consumer_mode)) + " gives a " +
           "warpgroup " + std::to_string(rows) + " rows, not a multiple of 64";
  }
  if (rows / 64 * config.block_n / 2 > 128) {
    return "tile " + tile + " " + std::string(to_string(config.consumer_mode)) +
           " needs more than 128 fp32 accumulators per consumer thread";
  }
  if (config.persistence == GemmPersistence::grid) {
    return "wgmma variants are persistent: persistence must be static or dynamic";
  }
  const std::string cluster =
      std::to_string(config.cluster_m) + "x" + std::to_string(config.cluster_n);
  if (config.cluster_m < 1 || config.cluster_m > 2 || config.cluster_n < 1 ||
      config.cluster_n > 2) {
    return "cluster " + cluster + " must be 1x1, 2x1, 1x2 or 2x2";
  }
  if (config.cluster_size() > 1 && config.persistence == GemmPersistence::dynamic_loop) {
    return "a " + cluster +
           " cluster needs static or stream-K persistence (one tile order for all its CTAs)";
  }
  if (config.persistence == GemmPersistence::stream_k &&
      config.consumer_mode != GemmConsumerMode::cooperative) {
    return "stream-K persistence needs the cooperative consumer mode (pingpong's warpgroups "
           "skip each other's k blocks in the ring, which stream-K makes uneven)";
  }
  // A (K-major) is shared by rows: block_m of them along a cluster row, or transposed (the
  // kernel's second operand) block_n down a cluster column.
  const int a_rows = config.transposed ? config.block_n : config.block_m;
  const int a_sharers = config.transposed ? config.cluster_m : config.cluster_n;
  if (a_sharers > 1 && (a_rows / a_sharers) % 8 != 0) {
    return "cluster " + cluster + " splits A's " + std::to_string(a_rows) +
           " rows into shares that are not whole 8-row swizzle atoms";
  }
  if (config.swizzle_stride < 0) {
    return "swizzle stride " + std::to_string(config.swizzle_stride) + " must be 0 or positive";
  }
  const int shared = gemm_dynamic_shared_bytes(config);
  if (shared > kWgmmaMaxSharedBytes) {
    return "needs " + std::to_string(shared) + " bytes of shared memory, at most " +
           std::to_string(kWgmmaMaxSharedBytes);
  }
  return {};
}

}  // namespace

int gemm_dynamic_shared_bytes(const GemmConfig& config) {
  if (config.path == InstructionPath::wgmma) {
    // 1024 (aligning the base) + the ring + C staging per consumer + barriers and tile queue; B
    // and C in whole 64-column chunks (a block_n of 176 takes three), except in a transposed
    // config, whose B (swr's A) and C staging are block_n rows of 128 bytes.
    const int chunk_columns = config.transposed ? config.block_n : (config.block_n + 63) / 64 * 64;
    return 1024 + config.stages * (config.block_m * 64 + 64 * chunk_columns) * 2 +
           2 * wgmma_rows_per_warpgroup(config) * chunk_columns * 2 + 8 * (2 * config.stages + 4) +
           8;
  }
  return config.stages * (config.block_m * config.block_k + config.block_k * config.block_n) * 2;
}

int estimate_gemm_registers(const GemmConfig& config) {
  if (config.path == InstructionPath::wgmma) return kWgmmaEntryRegisters;
  if (config.warps_m < 1 || config.warps_n < 1) return 0;
  const int warp_m = config.warp_tile_m();
  const int warp_n = config.warp_tile_n();
  const int accumulators = warp_m * warp_n / kWarpSize;
  // Per k16 step a lane holds 4 registers per m16 slice of A and 2 per n8 slice of B; two sets.
  const int fragments = 2 * (warp_m / 16 * 4 + warp_n / 8 * 2);
  return accumulators + fragments + kGemmBookkeepingRegisters;
}

std::string gemm_shape_problem(const GemmConfig& config) {
  if (config.path == InstructionPath::wgmma) return wgmma_shape_problem(config);
  if (config.persistence == GemmPersistence::dynamic_loop ||
      config.persistence == GemmPersistence::stream_k) {
    return std::string(to_string(config.persistence)) +
           " persistence is a wgmma knob: mma_sync variants take grid or static";
  }
  if (config.transposed) return "transposed (C^T = B^T A^T) is a wgmma knob";
  if (config.block_k != 32 && config.block_k != 64) {
    return "block_k " + std::to_string(config.block_k) + " must be 32 or 64";
  }
  if (config.stages < 2 || config.stages > 4) {
    return "stages " + std::to_string(config.stages) + " must be 2, 3 or 4";
  }
  if (config.warps_m < 1 || config.warps_n < 1 || config.block_m % config.warps_m != 0 ||
      config.block_n % config.warps_n != 0) {
    return "warps " + std::to_string(config.warps_m) + " x " + std::to_string(config.warps_n) +
           " do not split the tile " + std::to_string(config.block_m) + " x " +
           std::to_string(config.block_n) + " evenly";
  }
  if (config.warp_tile_m() % 16 != 0 || config.warp_tile_n() % 32 != 0) {
    return "warp tile " + std::to_string(config.warp_tile_m()) + " x " +
           std::to_string(config.warp_tile_n()) +
           " must be a multiple of 16 rows and 32 columns (m16 slices, n32 ldmatrix pairs)";
  }
  if (config.block_n % 64 != 0) {
    return "block_n " + std::to_string(config.block_n) + " must be a multiple of 64";
  }
  if (config.swizzle_stride < 0) {
    return "swizzle stride " + std::to_string(config.swizzle_stride) + " must be 0 or positive";
  }
  if (config.threads() > kMaxThreadsPerBlock) {
    return "needs " + std::to_string(config.threads()) + " threads per CTA, at most " +
           std::to_string(kMaxThreadsPerBlock);
  }
  if (std::string why = copy_problem("A", config.block_m, config.block_k, config.threads());
      !why.empty())
    return why;
  return copy_problem("B", config.block_k, config.block_n, config.threads());
}

ResourceUse gemm_resource_use(const GemmConfig& config, const GpuProfile& gpu,
                              int compiled_registers) {
  const bool estimated = compiled_registers < 0;
  const int registers = estimated ? estimate_gemm_registers(config) : compiled_registers;
  // A target without the path's instructions cannot run the variant at all (gb10 has no wgmma).
  std::string problem = instruction_path_problem(gpu, config.path);
  if (problem.empty()) problem = gemm_shape_problem(config);
  return cta_resource_use(
      {config.warps(), gemm_dynamic_shared_bytes(config), registers, estimated, std::move(problem)},
      gpu);
}

}  // namespace swr
