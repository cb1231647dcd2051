// One step of the wgmma attention backward for a warpgroup of 64 K/V rows, as both wgmma kernels
// run it (backward_kernel.cuh, backward_kernel_ws.cuh): the five products, each issued and
// committed as one wgmma group (the caller fences and waits, where its pipeline wants), and the
// pointwise P^T and dS^T between them. T: either kernel's traits (kHeadDim, kBlockM, kBlockN,
// kElement, the chunk sizes, kDqColumns, kCausal).
#pragma once

#include "attention/backward/sm90/backward_fragments.cuh"
#include "common/element.cuh"
#include "common/sm90/wgmma.cuh"
#include "common/sm90/wgmma_any_n.cuh"

namespace swr {
namespace attention {
namespace sm90 {

// acc (m64 x BlockM) = this warpgroup's 64 rows of K or V times the step's Q or dO tile
// transposed: S^T = K Q^T, dP^T = V dO^T. K-major both, k16 steps of 32 bytes in a chunk; the
// operands' descriptors (make_desc_kmajor<128>).
template <class T>
__device__ __forceinline__ void issue_transposed_scores(float* acc, unsigned long long kv_desc,
                                                        unsigned long long q_desc) {
  using namespace swr::sm90;
#pragma unroll
  for (int kk = 0; kk < T::kHeadDim / 16; ++kk) {
    const int offset = (kk / 4) * T::kKvChunkBytes + (kk % 4) * 32;
    const int q_offset = (kk / 4) * T::kQChunkBytes + (kk % 4) * 32;
    wgmma_ss_n<T::kBlockM, T::kElement, 0>(acc, advance_desc(kv_desc, offset),
                                           advance_desc(q_desc, q_offset), kk > 0 ? 1 : 0);
  }
  wgmma_commit();
}
template <class T>
__device__ __forceinline__ void issue_transposed_scores(float* acc, const unsigned char* kv_rows,
                                                        const unsigned char* q_tile) {
  using namespace swr::sm90;
  issue_transposed_scores<T>(acc, make_desc_kmajor<128>(kv_rows), make_desc_kmajor<128>(q_tile));
}

// S^T into P^T = 2^(S^T scale log2(e) - L log2(e)) in place; lse_of(j): the float2 of L log2(e)
// at this thread's columns of n8 block j. Padding rows of Q have L = +inf (P = 0). The mask: key
// row r of this warpgroup's 64 hides from Q column c of the step where r > c + diagonal_offset
// (causal; diagonal_offset = (first Q row + causal shift) - (the warpgroup's first key row)) or
// where r >= key_rows (a padding key past seq_kv: its P reaches only rows of dK and dV that are
// never written, and dQ through a zero row of K). A row hides the columns below its limit, each
// element's column offset a constant. Only the warps that hold a hidden element mask: with
// T::kMaskByBranch they take a copy of the loop with the mask and the others one without (past
// the diagonal, most steps at long sequences, the mask would cost two instructions an element;
// and the branch keeps the compiler from sinking the exponentials past the caller's dP^T wait,
// as it did with 27 of 32 at head dim 128 without a mask: forming all before the wait measured
// 1.025-1.033x); otherwise every warp compares, against limits no column reaches where nothing
// hides.
template <class T, bool Masked, class LseOf>
__device__ __forceinline__ void exponentiate_scores_as(float* s, LseOf&& lse_of, int2 limits,
                                                       float scale_log2) {
#pragma unroll
  for (int j = 0; j < T::kBlockM / 8; ++j) {
    const float2 lse = lse_of(j);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float p = exp2f(s[4 * j + i] * scale_log2 - (i % 2 ? lse.y : lse.x));
      if (Masked && 8 * j + i % 2 < (i / 2 ? limits.y : limits.x)) p = 0.f;
      s[4 * j + i] = p;
    }
  }
}
template <class T, class LseOf>
__device__ __forceinline__ void exponentiate_scores(float* s, LseOf&& lse_of,
                                                    const WarpgroupLane& at, int diagonal_offset,
                                                    int key_rows, float scale_log2) {
  // Rows 16 warp + group (h = 0) and 8 below it (h = 1), at columns 2 quad + 8j + i % 2.
  const auto limit_of = [&](int h) {
    const int row = at.row(2 * h);
    if (row >= key_rows) return T::kBlockM;
    return T::kCausal ? row - at.column(0, 0) - diagonal_offset : -T::kBlockM;
  };
  const int2 limits = make_int2(limit_of(0), limit_of(1));
  const int last_row = 16 * at.warp + 15;
  const bool masks = (T::kCausal && last_row > diagonal_offset) || last_row >= key_rows;
  if constexpr (!T::kMaskByBranch) {
    exponentiate_scores_as<T, T::kCausal>(
        s, lse_of, masks ? limits : make_int2(-T::kBlockM, -T::kBlockM), scale_log2);
  } else if (masks) {
    exponentiate_scores_as<T, true>(s, lse_of, limits, scale_log2);
  } else {
    exponentiate_scores_as<T, false>(s, lse_of, limits, scale_log2);
  }
}

// P^T as the A fragments of dV += P^T dO: two n8 blocks of the accumulator a k16 step.
template <class T>
__device__ __forceinline__ void pack_scores(const float* p, unsigned* packed) {
#pragma unroll
  for (int i = 0; i < T::kBlockM / 4; ++i)
    packed[i] = pack_pair<T::kElement>(p[2 * i], p[2 * i + 1]);
}

// dS^T = P^T o (dP^T - delta), packed; p_of(j, h): P^T's pair of registers 4j + 2h, 4j + 2h + 1
// as a float2; delta_of(j): delta at this thread's columns of n8 block j.
template <class T, class POf, class DeltaOf>
__device__ __forceinline__ void transposed_ds(POf&& p_of, const float* dp, DeltaOf&& delta_of,
                                              unsigned* ds_packed) {
#pragma unroll
  for (int j = 0; j < T::kBlockM / 8; ++j) {
    const float2 d = delta_of(j);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float2 p = p_of(j, h);
      ds_packed[2 * j + h] = pack_pair<T::kElement>(p.x * (dp[4 * j + 2 * h] - d.x),
                                                    p.y * (dp[4 * j + 2 * h + 1] - d.y));
    }
  }
}

// acc (m64 x HeadDim) += this warpgroup's packed P^T or dS^T (A from registers) times the step's
// dO or Q tile, MN-major (16 Q rows a k16 step): dV += P^T dO, dK += dS^T Q. q_desc: the tile's
// register_product_desc.
template <class T>
__device__ __forceinline__ unsigned long long register_product_desc(const unsigned char* q_tile) {
  return swr::sm90::make_desc_mnmajor<128>(q_tile, T::kQChunkBytes);
}
template <class T>
__device__ __forceinline__ void issue_register_product(float* acc, const unsigned* packed,
                                                       unsigned long long q_desc) {
  using namespace swr::sm90;
#pragma unroll
  for (int kk = 0; kk < T::kBlockM / 16; ++kk) {
    wgmma_rs_n<T::kHeadDim, T::kElement, 1>(acc, packed + 4 * kk,
                                            advance_desc(q_desc, kk * 16 * 128), 1);
  }
  wgmma_commit();
}
template <class T>
__device__ __forceinline__ void issue_register_product(float* acc, const unsigned* packed,
                                                       const unsigned char* q_tile) {
  issue_register_product<T>(acc, packed, register_product_desc<T>(q_tile));
}

// This warpgroup's part of dQ = dS K: the shared dS^T tile read MN-major (its rows are K/V rows,
// the reduction) from Q row `dq_row0`, K MN-major from column `dq_column0`, m64 x kDqColumns.
// T::kDqTransposed: dQ^T = K^T dS^T instead, m64 (columns `dq_column0` on) x BlockM Q rows: K read
// MN-major as A, the dS tile (Q rows by K/V columns) K-major as B. The operands' descriptors:
// dq_ds_desc and dq_k_desc.
template <class T>
__device__ __forceinline__ unsigned long long dq_ds_desc(const unsigned char* ds_tile,
                                                         int dq_row0) {
  using namespace swr::sm90;
  if constexpr (T::kDqTransposed) {
    return make_desc_kmajor<128>(ds_tile);
  } else {
    return make_desc_mnmajor<128>(ds_tile + (dq_row0 / 64) * T::kDsChunkBytes, T::kDsChunkBytes);
  }
}
template <class T>
__device__ __forceinline__ unsigned long long dq_k_desc(const unsigned char* k_tile,
                                                        int dq_column0) {
  using namespace swr::sm90;
  return make_desc_mnmajor<128>(k_tile + (dq_column0 / 64) * T::kKvChunkBytes, T::kKvChunkBytes);
}
template <class T>
__device__ __forceinline__ void issue_dq(float* dq, unsigned long long ds_desc,
                                         unsigned long long k_desc) {
  using namespace swr::sm90;
  if constexpr (T::kDqTransposed) {
#pragma unroll
    for (int kk = 0; kk < T::kBlockN / 16; ++kk) {
      const int ds_offset = (kk / 4) * T::kDsChunkBytes + (kk % 4) * 32;
      wgmma_ss_n<T::kDqN, T::kElement, 0, 1>(dq, advance_desc(k_desc, kk * 16 * 128),
                                             advance_desc(ds_desc, ds_offset), kk > 0 ? 1 : 0);
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < T::kBlockN / 16; ++kk) {
      wgmma_ss_n<T::kDqColumns, T::kElement, 1, 1>(dq, advance_desc(ds_desc, kk * 16 * 128),
                                                   advance_desc(k_desc, kk * 16 * 128),
                                                   kk > 0 ? 1 : 0);
    }
  }
  wgmma_commit();
}
template <class T>
__device__ __forceinline__ void issue_dq(float* dq, const unsigned char* ds_tile,
                                         const unsigned char* k_tile, int dq_row0, int dq_column0) {
  issue_dq<T>(dq, dq_ds_desc<T>(ds_tile, dq_row0), dq_k_desc<T>(k_tile, dq_column0));
}

}  // namespace sm90
}  // namespace attention
}  // namespace swr
