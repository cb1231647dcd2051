// A small set of variants in which every knob value appears at least once: tiles, stages 1-3,
// both orders, every persistence and swizzle, f16 and bf16, causal or not, head dims 64 and 128.
// Each fits both gb10 (99 KiB) and the Hopper parts, so the same set is compiled for both archs.
#pragma once

#include <string>
#include <vector>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "tests/fixtures/problem_builders.hpp"

namespace swr::testing {

struct Variant {
  AttentionProblem problem;
  AttentionConfig config;
};

inline AttentionConfig make_config(int block_m, int block_n, int warps, int stages, KvOrder order,
                                   Persistence persistence, TileSwizzle swizzle,
                                   int head_group = 1) {
  return fixtures::attention_config(block_m, block_n, warps, stages, order, persistence, swizzle,
                                    head_group);
}

inline AttentionProblem make_problem(int head_dim, DataType dtype, bool causal) {
  return {.batch = 2,
          .heads = 4,
          .seq_q = 1000,
          .seq_kv = 1000,
          .head_dim = head_dim,
          .dtype = dtype,
          .causal = causal};
}

inline std::vector<Variant> representative_variants() {
  using K = KvOrder;
  using P = Persistence;
  using S = TileSwizzle;
  return {
      {make_problem(64, DataType::f16, false),
       make_config(64, 64, 4, 1, K::cyclic, P::grid, S::head_major)},
      {make_problem(128, DataType::bf16, true),
       make_config(128, 64, 4, 2, K::sawtooth, P::static_loop, S::heads_interleaved)},
      {make_problem(64, DataType::f16, true),
       make_config(128, 64, 8, 3, K::cyclic, P::dynamic, S::head_groups, 4)},
      {make_problem(64, DataType::bf16, false),
       make_config(128, 128, 8, 1, K::sawtooth, P::grid, S::head_groups, 2)},
      {make_problem(128, DataType::f16, false),
       make_config(64, 128, 4, 1, K::cyclic, P::static_loop, S::head_major)},
      {make_problem(128, DataType::f16, true),
       make_config(128, 64, 8, 2, K::sawtooth, P::dynamic, S::heads_interleaved)},
  };
}

}  // namespace swr::testing
