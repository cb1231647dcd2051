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

// The acceptance bound of a gradient's ||got - ref|| / ||ref|| per element type: looser than the
// forward's (P and dS are rounded to 16 bits before their products, and dS = P (dP - delta)
// cancels): 1e-2 for f16, 4e-2 for bf16.
double backward_relative_error_tolerance(DataType type);

}  // namespace swr
