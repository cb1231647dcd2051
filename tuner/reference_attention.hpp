// Attention forward on the CPU in double precision: the reference small shapes are checked against.
#pragma once

#include <cstdint>
#include <vector>

#include "swr/attention_problem.hpp"

namespace swr {

// Inputs are the kernel's 16-bit elements, contiguous: Q [B, H, S_q, D], K and V [B, H_kv, S_kv,
// D]; the result is [B, H, S_q, D] in double. GQA/MQA and the causal alignment as the problem
// says; a row that sees no key (bottom-right with S_q > S_kv) is 0. Runs on all hardware threads.
// With log_sum_exp, also each row's ln(sum_j exp(S_ij / sqrt(D))) into it, [B, H, S_q] (+inf
// for a row that sees no key), as the forward hands the backward.
std::vector<double> reference_attention(const AttentionProblem& problem,
                                        const std::vector<std::uint16_t>& q,
                                        const std::vector<std::uint16_t>& k,
                                        const std::vector<std::uint16_t>& v,
                                        std::vector<double>* log_sum_exp = nullptr);

struct OutputComparison {
  double relative_error = 0;    // ||out - ref|| / ||ref||
  std::int64_t non_finite = 0;  // NaN or inf elements (an unwritten poisoned element is NaN)
  bool passes(double tolerance) const { return non_finite == 0 && relative_error < tolerance; }
};

OutputComparison compare_with_reference(const AttentionProblem& problem,
                                        const std::vector<std::uint16_t>& output,
                                        const std::vector<double>& reference);

// The largest |log_sum_exp - reference| over rows (both +inf for a row that sees no key is 0;
// NaN or one side infinite is inf).
double log_sum_exp_error(const std::vector<float>& log_sum_exp,
                         const std::vector<double>& reference);

// The acceptance bound per element type: 2e-3 for f16, 1e-2 for bf16.
double relative_error_tolerance(DataType type);

}  // namespace swr
