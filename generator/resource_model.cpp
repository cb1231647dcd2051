#include "generator/resource_model.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace swr {
namespace {

constexpr int kWarpSize = 32;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxRegistersPerThread = 255;
// Registers are allocated per warp in units of 8 per thread (256 per warp).
constexpr int kRegisterAllocationUnit = 8;
// Addresses, loop counters, the running max and sum of the online softmax.
constexpr int kBookkeepingRegisters = 40;

int round_up(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

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
  return {};
}

ResourceUse resource_use(const AttentionProblem& problem, const AttentionConfig& config,
                         const GpuProfile& gpu, int registers, bool registers_estimated) {
  ResourceUse use;
  use.threads_per_block = config.threads();
  use.dynamic_shared_bytes = attention_dynamic_shared_bytes(problem, config);
  use.estimated_registers = registers;

  use.does_not_fit = tile_shape_problem(config);
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
    use.does_not_fit = std::string("needs ") + (registers_estimated ? "an estimated " : "") +
                       std::to_string(registers) + " registers per thread, at most " +
                       std::to_string(kMaxRegistersPerThread);
  }
  if (!use.does_not_fit.empty()) return use;

  const int shared_per_block = use.dynamic_shared_bytes + gpu.reserved_shared_memory_per_block;
  const int registers_per_warp =
      round_up(std::max(registers, 1), kRegisterAllocationUnit) * kWarpSize;
  const std::vector<std::pair<int, const char*>> limits = {
      {gpu.shared_memory_per_sm / shared_per_block, "shared memory"},
      {gpu.registers_per_sm / registers_per_warp / config.warps, "registers"},
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

}  // namespace

int attention_dynamic_shared_bytes(const AttentionProblem& problem, const AttentionConfig& config) {
  const int rows = config.block_m + 2 * config.stages * config.block_n;
  return rows * problem.head_dim * static_cast<int>(element_bytes(problem.dtype));
}

int estimate_attention_registers(const AttentionProblem& problem, const AttentionConfig& config) {
  const int rows = config.warps > 0 ? config.rows_per_warp() : 0;
  // fp32 accumulators of one warp spread over its 32 lanes: O (rows x head_dim), S (rows x
  // block_n).
  const int output_accumulators = rows * problem.head_dim / kWarpSize;
  const int score_accumulators = rows * config.block_n / kWarpSize;
  return output_accumulators + score_accumulators + kBookkeepingRegisters;
}

ResourceUse attention_resource_use(const AttentionProblem& problem, const AttentionConfig& config,
                                   const GpuProfile& gpu) {
  return resource_use(problem, config, gpu, estimate_attention_registers(problem, config), true);
}

ResourceUse attention_resource_use(const AttentionProblem& problem, const AttentionConfig& config,
                                   const GpuProfile& gpu, int compiled_registers) {
  return resource_use(problem, config, gpu, compiled_registers, false);
}

}  // namespace swr
