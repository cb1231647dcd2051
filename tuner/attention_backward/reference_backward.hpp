// The attention backward on the CPU in double precision: what small shapes are checked against.
#pragma once

#include <cstdint>
#include <vector>

#include "swr/attention_problem.hpp"

namespace swr {

struct BackwardReference {
  std::vector<double> lse;  // [B, H, S_q], natural log; +inf for a row that sees no key
  std::vector<double> dq;   // [B, H, S_q, D]
  std::vector<double> dk;   // [B, H_kv, S_kv, D]: a K/V head sums its query heads' shares
  std::vector<double> dv;
};

// Inputs are the kernels' 16-bit elements, contiguous: Q and dO [B, H, S_q, D], K and V
// [B, H_kv, S_kv, D]. P is recomputed exactly (softmax in double, the mask as the problem says),
// O = P V in double, delta = rowsum(dO o O), and the gradients of O = softmax(Q K^T / sqrt(D)) V.
BackwardReference reference_attention_backward(const AttentionProblem& problem,
                                               const std::vector<std::uint16_t>& q,
                                               const std::vector<std::uint16_t>& k,
                                               const std::vector<std::uint16_t>& v,
                                               const std::vector<std::uint16_t>& d_o);

// A gradient's ||got - ref|| / ||ref|| is held to the forward's bound (relative_error_tolerance:
// 2e-3 for f16, 1e-2 for bf16): on the H200 the worst of 176 checked gradients was 3.4e-4 (f16)
// and 2.6e-3 (bf16), P and dS rounded to 16 bits before their products included.
}  // namespace swr
