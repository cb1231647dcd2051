// Thread-block clusters (PTX ISA "barrier.cluster", special registers %cluster_ctarank,
// %clusterid, %nclusterid). A kernel compiled with __cluster_dims__ runs its CTAs in groups that
// can address each other's shared memory (mapa) and receive TMA multicasts.
#pragma once

namespace swr {
namespace sm90 {

__device__ __forceinline__ unsigned cluster_cta_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Every thread of every CTA in the cluster, warps converged (.aligned).
__device__ __forceinline__ void cluster_sync_aligned() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}
// Same, callable from divergent code (a warp whose lanes arrive at different times).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

}  // namespace sm90
}  // namespace swr
