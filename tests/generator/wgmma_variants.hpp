// A small set of wgmma (sm_90a) attention variants in which every value of the new knobs appears
// at least once: consumer warpgroups 2 and 3, block_n 128/160/176/192, stages 2 and 3, overlap and
// pingpong on and off, both K/V L2 hints, both orders, grid, static and dynamic persistence (the
// latter with and without pingpong, 2 and 3 warpgroups), every swizzle, P in registers or in
// shared memory (with and without overlap and pingpong, 2 and 3 warpgroups, block_n a multiple of
// 64 or not), f16 and bf16, causal or not, head dims 64 and 128. Shared by the CPU compile test
// and the GPU test, so the GPU checks what CI compiles.
#pragma once

#include <vector>

#include "representative_variants.hpp"

namespace swr::testing {

inline AttentionConfig make_wgmma_config(int consumer_warpgroups, int block_n, int stages,
                                         bool overlap, bool pingpong, KvCacheHint hint,
                                         KvOrder order, Persistence persistence,
                                         TileSwizzle swizzle, int head_group = 1) {
  AttentionConfig config = make_config(64 * consumer_warpgroups, block_n,
                                       AttentionConfig::wgmma_warps(64 * consumer_warpgroups),
                                       stages, order, persistence, swizzle, head_group);
  config.path = InstructionPath::wgmma;
  config.overlap = overlap;
  config.pingpong = pingpong;
  config.kv_cache_hint = hint;
  return config;
}

inline AttentionConfig with_p_in_smem(AttentionConfig config) {
  config.p_in_smem = true;
  return config;
}

inline std::vector<Variant> wgmma_variants() {
  using K = KvOrder;
  using P = Persistence;
  using S = TileSwizzle;
  using H = KvCacheHint;
  return {
      {make_problem(128, DataType::f16, false),
       make_wgmma_config(2, 128, 2, true, true, H::none, K::cyclic, P::grid, S::head_major)},
      {make_problem(128, DataType::bf16, true),
       make_wgmma_config(2, 176, 2, true, true, H::evict_last, K::sawtooth, P::static_loop,
                         S::heads_interleaved)},
      {make_problem(64, DataType::f16, true),
       make_wgmma_config(3, 192, 2, false, false, H::none, K::cyclic, P::static_loop,
                         S::head_groups, 4)},
      {make_problem(64, DataType::bf16, false),
       make_wgmma_config(2, 160, 3, false, true, H::none, K::sawtooth, P::grid, S::head_major)},
      {make_problem(128, DataType::f16, true),
       make_wgmma_config(2, 128, 3, false, false, H::evict_last, K::cyclic, P::grid, S::head_groups,
                         2)},
      {make_problem(64, DataType::f16, false),
       make_wgmma_config(3, 128, 3, true, false, H::none, K::sawtooth, P::static_loop,
                         S::head_major)},
      {make_problem(128, DataType::bf16, false),
       make_wgmma_config(3, 128, 2, false, false, H::none, K::cyclic, P::grid, S::head_major)},
      {make_problem(128, DataType::f16, false),
       make_wgmma_config(2, 192, 2, true, false, H::none, K::cyclic, P::grid, S::head_major)},
      // Dynamic persistence (index 8, 9) and P in shared memory (10-13).
      {make_problem(128, DataType::f16, true),
       make_wgmma_config(2, 128, 2, true, true, H::none, K::sawtooth, P::dynamic, S::head_major)},
      {make_problem(64, DataType::bf16, false),
       make_wgmma_config(3, 128, 2, false, false, H::evict_last, K::cyclic, P::dynamic,
                         S::heads_interleaved)},
      {make_problem(128, DataType::bf16, true),
       with_p_in_smem(
           make_wgmma_config(2, 128, 2, true, true, H::none, K::cyclic, P::grid, S::head_major))},
      {make_problem(64, DataType::f16, true),
       with_p_in_smem(
           make_wgmma_config(3, 176, 2, false, false, H::none, K::cyclic, P::grid, S::head_major))},
      {make_problem(128, DataType::f16, false),
       with_p_in_smem(make_wgmma_config(2, 128, 2, false, false, H::none, K::sawtooth, P::dynamic,
                                        S::head_major))},
      {make_problem(64, DataType::bf16, true),
       with_p_in_smem(
           make_wgmma_config(2, 160, 2, true, false, H::none, K::cyclic, P::grid, S::head_major))},
  };
}

}  // namespace swr::testing
