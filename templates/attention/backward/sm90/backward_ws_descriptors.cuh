// The shared-memory descriptors of a warp-specialized consumer's five products (backward_step.cuh
// issues them), per step. With T::kBlockM != 128 each is built once a kernel from slot 0's
// address, opaque (opaque_desc), and a step's slot is one 64-bit add on: at head dim 128 (80 Q
// rows) that took 39 uniform-datapath instructions off a step's 589 and measured 0.989-0.998x
// main's time on the H200. At 128 Q rows (head dim 64) it measured 1.003-1.013x without the mask
// (0.993-1.000x with it), so there each is built from its slot's address every step, as before
// (bench/results/attention-backward-ws-h200/descriptors-2026-11-29/).
#pragma once

#include "attention/backward/sm90/backward_step.cuh"
#include "attention/backward/sm90/backward_ws_pipeline.cuh"
#include "common/sm90/wgmma.cuh"

namespace swr {
namespace attention {
namespace sm90 {

template <class T>
struct BackwardWsDescriptors {
  static constexpr bool kBuiltOnce = T::kBlockM != 128;

  const BackwardWsTiles<T>& tiles;
  int wg_row0, dq_row0, dq_column0;
  // Built once: K's and V's rows of this warpgroup, slot 0 of Q and dO read K-major (the scores)
  // and MN-major (the register products), slot 0 of dS^T and K as dQ reads them, and K in place
  // of dS^T (a lagged tile's first step).
  unsigned long long k, v, q, d_o, q_mn, d_o_mn, ds, k_as_ds, k_dq;

  __device__ __forceinline__ BackwardWsDescriptors(const BackwardWsTiles<T>& tiles_, int wg_row0_,
                                                   int dq_row0_, int dq_column0_)
      : tiles(tiles_), wg_row0(wg_row0_), dq_row0(dq_row0_), dq_column0(dq_column0_) {
    using namespace swr::sm90;
    if constexpr (kBuiltOnce) {
      k = opaque_desc(make_desc_kmajor<128>(kv_rows(false)));
      v = opaque_desc(make_desc_kmajor<128>(kv_rows(true)));
      q = opaque_desc(make_desc_kmajor<128>(tiles.q(0)));
      d_o = opaque_desc(make_desc_kmajor<128>(tiles.d_o(0)));
      q_mn = opaque_desc(register_product_desc<T>(tiles.q(0)));
      d_o_mn = opaque_desc(register_product_desc<T>(tiles.d_o(0)));
      ds = opaque_desc(dq_ds_desc<T>(tiles.ds(0), dq_row0));
      k_as_ds = opaque_desc(dq_ds_desc<T>(tiles.k(), dq_row0));
      k_dq = opaque_desc(dq_k_desc<T>(tiles.k(), dq_column0));
    }
  }

  // This warpgroup's rows of K or V.
  __device__ __forceinline__ const unsigned char* kv_rows(bool of_v) const {
    return (of_v ? tiles.v() : tiles.k()) + wg_row0 * 128;
  }
  // S^T's operands (K, Q) or dP^T's (V, dO) at Q/dO slot `slot`.
  __device__ __forceinline__ unsigned long long scores_kv(bool of_v) const {
    if constexpr (kBuiltOnce) return of_v ? v : k;
    return swr::sm90::make_desc_kmajor<128>(kv_rows(of_v));
  }
  __device__ __forceinline__ unsigned long long scores_q(bool of_d_o, int slot) const {
    if constexpr (kBuiltOnce) return swr::sm90::advance_desc(of_d_o ? d_o : q, slot * T::kQBytes);
    return swr::sm90::make_desc_kmajor<128>(of_d_o ? tiles.d_o(slot) : tiles.q(slot));
  }
  // dV's B (dO) or dK's (Q) at slot `slot`.
  __device__ __forceinline__ unsigned long long register_product(bool of_d_o, int slot) const {
    if constexpr (kBuiltOnce) {
      return swr::sm90::advance_desc(of_d_o ? d_o_mn : q_mn, slot * T::kQBytes);
    }
    return register_product_desc<T>(of_d_o ? tiles.d_o(slot) : tiles.q(slot));
  }
  // dQ's dS^T operand at dS^T slot `slot`, or K in its place (k_in_place), and its K operand.
  __device__ __forceinline__ unsigned long long dq_ds(int slot, bool k_in_place = false) const {
    if constexpr (kBuiltOnce) {
      return k_in_place ? k_as_ds : swr::sm90::advance_desc(ds, slot * T::kDsBytes);
    }
    return dq_ds_desc<T>(k_in_place ? tiles.k() : tiles.ds(slot), dq_row0);
  }
  __device__ __forceinline__ unsigned long long dq_k() const {
    if constexpr (kBuiltOnce) return k_dq;
    return dq_k_desc<T>(tiles.k(), dq_column0);
  }
};

}  // namespace sm90
}  // namespace attention
}  // namespace swr
