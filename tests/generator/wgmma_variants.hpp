// A small set of wgmma (sm_90a) attention variants in which every value of the new knobs appears
// at least once: consumer warpgroups 2 and 3, block_n 128/160/176/192, stages 2 and 3, overlap and
// pingpong on and off (pingpong of 2 and of 3 warpgroups), both K/V L2 hints, both orders, grid,
// static and dynamic persistence (the latter with and without pingpong, 2 and 3 warpgroups), every
// swizzle, P in registers or in shared memory (with and without overlap and pingpong, 2 and 3
// warpgroups, block_n a multiple of 64 or not), f16 and bf16, causal or not, head dims 64 and 128;
// then every other head dim (32, 80, 96, 160, 192, 256: each shared-memory chunk width, 16, 32 and
// 64 columns) on its FA3-like tile and on other consumer modes, block_n 48..144, persistences and P
// forms. Shared by the CPU compile test and the GPU test, so the GPU checks what CI compiles.
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

// A wgmma variant by its key (as `swr-tune space` lists it).
inline AttentionConfig wgmma_key(const char* key) {
  return AttentionConfig::from_key(key).value();
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
      // The other head dims (index 14 on): chunks of 32 columns (64-byte swizzle) at D=32, 96,
      // 160; of 16 (32-byte swizzle) at D=80; of 64 at D=192, 256.
      {make_problem(32, DataType::bf16, true),
       wgmma_key("wgmma-m192n192s2-cyclic-grid-head_major")},
      {make_problem(32, DataType::f16, false),
       wgmma_key("wgmma-m128n128s3-ov-pp-sawtooth-dynamic-heads_interleaved")},
      {make_problem(80, DataType::f16, false),
       wgmma_key("wgmma-m192n144s2-ov-psm-cyclic-grid-head_major")},
      {make_problem(80, DataType::bf16, true),
       wgmma_key("wgmma-m128n128s2-ov-pp-evl-sawtooth-static-head_major")},
      {make_problem(96, DataType::bf16, true),
       wgmma_key("wgmma-m192n144s2-ov-psm-cyclic-dynamic-head_major")},
      {make_problem(96, DataType::f16, false),
       wgmma_key("wgmma-m128n112s3-ov-cyclic-grid-head_major")},
      {make_problem(160, DataType::f16, true),
       wgmma_key("wgmma-m128n112s2-ov-pp-cyclic-static-groups2")},
      {make_problem(160, DataType::bf16, false),
       wgmma_key("wgmma-m192n96s2-cyclic-grid-head_major")},
      {make_problem(192, DataType::bf16, false),
       wgmma_key("wgmma-m128n112s2-ov-cyclic-grid-head_major")},
      {make_problem(192, DataType::f16, true),
       wgmma_key("wgmma-m128n64s3-ov-pp-psm-sawtooth-dynamic-head_major")},
      {make_problem(256, DataType::f16, false),
       wgmma_key("wgmma-m128n80s2-ov-pp-cyclic-grid-head_major")},
      {make_problem(256, DataType::bf16, true),
       wgmma_key("wgmma-m128n80s2-ov-evl-sawtooth-dynamic-head_major")},
      {make_problem(256, DataType::f16, true),
       wgmma_key("wgmma-m128n64s2-psm-cyclic-grid-head_major")},
      {make_problem(256, DataType::bf16, false),
       wgmma_key("wgmma-m128n48s3-pp-cyclic-grid-head_major")},
      // Three consumer warpgroups taking turns (pingpong of three): overlapped with P in
      // registers, across the tiles of dynamic persistence, and with P in shared memory at D=128.
      {make_problem(64, DataType::bf16, true),
       wgmma_key("wgmma-m192n128s2-ov-pp-cyclic-grid-head_major")},
      {make_problem(64, DataType::f16, false),
       make_wgmma_config(3, 128, 3, true, true, H::none, K::sawtooth, P::dynamic, S::head_major)},
      {make_problem(128, DataType::bf16, false),
       with_p_in_smem(
           make_wgmma_config(3, 128, 2, true, true, H::none, K::cyclic, P::grid, S::head_major))},
  };
}

}  // namespace swr::testing
