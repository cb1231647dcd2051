// Builders shared by the L2 model tests.
#pragma once

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tests/fixtures/problem_builders.hpp"

namespace swr::model::testing {

inline AttentionProblem attention_problem(int batch, int heads, int seq, int head_dim,
                                          bool causal) {
  return fixtures::attention_shape(batch, heads, seq, head_dim, causal);
}

inline AttentionConfig attention_config(int block_m, int block_n, int warps, KvOrder order,
                                        Persistence persistence,
                                        TileSwizzle swizzle = TileSwizzle::head_major,
                                        int head_group = 1) {
  return fixtures::attention_config(block_m, block_n, warps, /*stages*/ 2, order, persistence,
                                    swizzle, head_group);
}

inline GpuProfile builtin(const char* name) {
  return find_gpu_profile(name).value();
}

// A GB10 with a small L2 and few SMs: thrashes at sequence lengths the exact sector replay can
// afford.
inline GpuProfile small_gpu(std::int64_t l2_bytes, int sm_count, int partitions = 1,
                            double shared_miss_factor = 1.0) {
  GpuProfile gpu = builtin("gb10");
  gpu.name = "small";
  gpu.l2_bytes = l2_bytes;
  gpu.sm_count = sm_count;
  gpu.l2_partitions = partitions;
  gpu.l2_shared_miss_factor = shared_miss_factor;
  return gpu;
}

}  // namespace swr::model::testing
