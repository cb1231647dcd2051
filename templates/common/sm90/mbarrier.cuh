// mbarrier primitives (PTX ISA 8.x, "Parallel synchronization and communication instructions:
// mbarrier"), raw inline PTX so NVRTC needs no headers. A barrier is one 8-byte word in shared
// memory. Phases alternate parity 0, 1, 0, ...; a waiter names the parity of the phase it waits
// to see completed. On a freshly initialised barrier, waiting on parity 1 returns at once (the
// "previous" phase counts as complete): producers start their empty-slot waits on parity 1.
#pragma once

namespace swr {
namespace sm90 {

__device__ __forceinline__ unsigned smem_u32(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// The first byte of `shared` (the dynamic shared memory) on a multiple of Bytes. Pointer
// arithmetic on the array itself keeps the compiler's knowledge that it is shared memory, so that
// loads and stores through the result are ld/st.shared, not generic ones (a round trip through an
// integer loses it).
template <unsigned Bytes>
__device__ __forceinline__ unsigned char* align_shared(unsigned char* shared) {
  return shared + ((Bytes - (smem_u32(shared) & (Bytes - 1))) & (Bytes - 1));
}

// `count` arrivals complete a phase (plus the transaction bytes announced by expect_tx).
__device__ __forceinline__ void mbarrier_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
}

// Makes mbarrier.init visible to the async proxy (TMA) and to the other CTAs of a cluster.
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbarrier_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

// One arrival that also announces `bytes` of TMA traffic that must land before the phase completes.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)),
               "r"(bytes)
               : "memory");
}

// Arrive on the barrier at the same offset in CTA `cta_rank` of the cluster (mapa translates the
// address; PTX ISA "mapa"). Used to release a multicast slot in every CTA that loaded into us.
// Default semantics (.release.cta), as CUTLASS's ClusterBarrier::arrive(cta_id): what it orders
// is the wgmma reads of the slot, already complete (wgmma.wait_group) before the arrive.
__device__ __forceinline__ void mbarrier_arrive_cluster(unsigned long long* bar,
                                                        unsigned cta_rank) {
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" ::"r"(smem_u32(bar)),
      "r"(cta_rank)
      : "memory");
}

// Spin until the phase of parity `parity` has completed. try_wait suspends the thread for a
// hardware time slice, so the loop does not hammer the barrier.
__device__ __forceinline__ void mbarrier_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
}

}  // namespace sm90
}  // namespace swr
