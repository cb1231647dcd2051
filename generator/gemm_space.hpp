// The GEMM variant space for one problem on one GPU: every tile shape, k depth, pipeline depth,
// persistence and block swizzle the template offers, minus what the target cannot run (resource
// model) and what is redundant for the problem (a swizzle that gives a tile order another variant
// already has, a persistent grid that is one wave anyway).
#pragma once

#include <vector>

#include "generator/variant_space.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {

using PrunedGemmConfig = Pruned<GemmConfig>;
using GemmSpace = SpaceOf<GemmConfig>;

struct GemmSpaceOptions {
  // The sweep measures every stride, even where two give the same order (its table has a column
  // per stride); tuning keeps one variant per order.
  bool keep_equivalent_orders = false;
};

// Every knob value the generator knows, before pruning: (stride 0, then kPaperSwizzleStrides
// along n, then along m) x (mma_sync tiles x block_k x stages x persistence, then the wgmma
// binaries), the swizzle slowest.build_gemm_space drops the paths the GPU cannot run.
std::vector<GemmConfig> enumerate_gemm_configs();

// Throws UsageError for an invalid problem.
GemmSpace build_gemm_space(const GemmProblem& problem, const GpuProfile& gpu,
                           const GemmSpaceOptions& options = {});

// The config with its swizzle replaced: the same kernel binary, another tile order.
GemmConfig with_swizzle(GemmConfig config, int stride, SwizzleAxis axis);

}  // namespace swr
