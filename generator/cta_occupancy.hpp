// What one CTA of a kernel needs (threads, shared memory, registers) and how many fit on an SM of
// a GPU, whatever the family: each family's resource model (resource_model.hpp for attention,
// gemm_resource_model.hpp for GEMM) supplies its own tile rules and estimates.
#pragma once

#include <string>

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

}  // namespace swr
