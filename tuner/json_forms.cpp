#include "tuner/json_forms.hpp"

#include <string>

namespace swr {

nlohmann::json gpu_json(const GpuProfile& gpu) {
  return {
      {"name", gpu.name},
      {"description", gpu.description},
      {"arch", gpu.arch},
      {"compute_capability", gpu.compute_capability()},
      {"sm_count", gpu.sm_count},
      {"l2_bytes", gpu.l2_bytes},
      {"shared_memory_per_block_optin", gpu.shared_memory_per_block_optin},
      {"shared_memory_per_sm", gpu.shared_memory_per_sm},
      {"registers_per_sm", gpu.registers_per_sm},
      {"max_threads_per_sm", gpu.max_threads_per_sm},
      {"max_blocks_per_sm", gpu.max_blocks_per_sm},
      {"dram_bytes_per_second", gpu.dram_bytes_per_second},
      {"peak_tensor_flops", gpu.peak_tensor_flops},
  };
}

nlohmann::json resources_json(const ResourceUse& resources) {
  return {
      {"threads_per_block", resources.threads_per_block},
      {"dynamic_shared_bytes", resources.dynamic_shared_bytes},
      {"estimated_registers", resources.estimated_registers},
      {"blocks_per_sm", resources.blocks_per_sm},
      {"limited_by", resources.limited_by},
  };
}

}  // namespace swr
