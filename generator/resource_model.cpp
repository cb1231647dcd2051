#include "generator/resource_model.hpp"

#include <string>

namespace swr {
namespace {

// Addresses, loop counters, the running max and sum of the online softmax.
constexpr int kBookkeepingRegisters = 40;

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
  return cta_resource_use({config.warps, attention_dynamic_shared_bytes(problem, config), registers,
                           registers_estimated, tile_shape_problem(config)},
                          gpu);
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
