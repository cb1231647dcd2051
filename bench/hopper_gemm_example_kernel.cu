// swr sm90 gemm, kernel coop_128x256x64_s3_static_c2x1_bf16 (the swizzle is a launch argument)
#include "gemm/sm90/gemm_kernel_ws.cuh"
using Traits = swr::gemm::sm90::Traits<
    /*block_m*/ 128, /*block_n*/ 256, /*block_k*/ 64, /*stages*/ 3, swr::Element::bf16,
    swr::gemm::sm90::ConsumerMode::cooperative, swr::gemm::sm90::Persistence::static_persistent,
    /*cluster_m*/ 2, swr::gemm::sm90::EpilogueKind::tma_store>;
static_assert(Traits::kDynamicSharedBytes == 214104, "host shared-memory formula");
extern "C" __global__ void __launch_bounds__(Traits::kThreads, 1)
    __cluster_dims__(Traits::kClusterM, 1, 1)
        swr_gemm_sm90(const __grid_constant__ swr::sm90::TmaDescriptor map_a,
                      const __grid_constant__ swr::sm90::TmaDescriptor map_b,
                      const __grid_constant__ swr::sm90::TmaDescriptor map_c, void* c, int m, int n,
                      int k, int swizzle_axis, int swizzle_group, int* tile_counter) {
  swr::gemm::sm90::gemm_ws<Traits>(map_a, map_b, map_c, c, m, n, k, swizzle_axis, swizzle_group,
                                   tile_counter);
}
