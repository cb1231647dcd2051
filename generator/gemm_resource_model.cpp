#include "generator/gemm_resource_model.hpp"

#include <string>

namespace swr {
namespace {

constexpr int kBookkeepingRegisters = 24;  // addresses, loop counters, slots, tile coordinates
constexpr int kChunkElements = 8;          // one cp.async of 16 bytes

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

}  // namespace

int gemm_dynamic_shared_bytes(const GemmConfig& config) {
  return config.stages * (config.block_m * config.block_k + config.block_k * config.block_n) * 2;
}

int estimate_gemm_registers(const GemmConfig& config) {
  if (config.warps_m < 1 || config.warps_n < 1) return 0;
  const int warp_m = config.warp_tile_m();
  const int warp_n = config.warp_tile_n();
  const int accumulators = warp_m * warp_n / kWarpSize;
  // Per k16 step a lane holds 4 registers per m16 slice of A and 2 per n8 slice of B; two sets.
  const int fragments = 2 * (warp_m / 16 * 4 + warp_n / 8 * 2);
  return accumulators + fragments + kBookkeepingRegisters;
}

std::string gemm_shape_problem(const GemmConfig& config) {
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
  return cta_resource_use({config.warps(), gemm_dynamic_shared_bytes(config), registers, estimated,
                           gemm_shape_problem(config)},
                          gpu);
}

}  // namespace swr
