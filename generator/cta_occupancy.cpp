#include "generator/cta_occupancy.hpp"

#include <algorithm>
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

}  // namespace swr
