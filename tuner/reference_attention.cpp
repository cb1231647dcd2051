#include "tuner/reference_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/parallel_for.hpp"
#include "swr/sixteen_bit.hpp"

namespace swr {
namespace {

std::vector<double> widen(DataType type, const std::vector<std::uint16_t>& values) {
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = element_to_float(type, values[i]);
  return out;
}

void attention_of_one_head(const AttentionProblem& p, const double* q, const double* k,
                           const double* v, double* out, double* log_sum_exp) {
  const int d = p.head_dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const int shift = p.causal_shift();
  std::vector<double> weights(p.seq_kv);
  for (int i = 0; i < p.seq_q; ++i) {
    // Row i sees keys j <= i + shift; a row that sees none gives 0 (FlashAttention's rule).
    const int visible = p.causal ? std::clamp(i + 1 + shift, 0, p.seq_kv) : p.seq_kv;
    double* row = out + static_cast<std::size_t>(i) * d;
    std::fill(row, row + d, 0.0);
    if (log_sum_exp != nullptr) log_sum_exp[i] = std::numeric_limits<double>::infinity();
    if (visible == 0) continue;
    double max_score = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < visible; ++j) {
      double dot = 0;
      for (int c = 0; c < d; ++c)
        dot += q[static_cast<std::size_t>(i) * d + c] * k[static_cast<std::size_t>(j) * d + c];
      weights[j] = dot * scale;
      max_score = std::max(max_score, weights[j]);
    }
    double sum = 0;
    for (int j = 0; j < visible; ++j) {
      weights[j] = std::exp(weights[j] - max_score);
      sum += weights[j];
    }
    if (log_sum_exp != nullptr) log_sum_exp[i] = max_score + std::log(sum);
    for (int j = 0; j < visible; ++j) {
      const double w = weights[j] / sum;
      for (int c = 0; c < d; ++c) row[c] += w * v[static_cast<std::size_t>(j) * d + c];
    }
  }
}

}  // namespace

std::vector<double> reference_attention(const AttentionProblem& problem,
                                        const std::vector<std::uint16_t>& q,
                                        const std::vector<std::uint16_t>& k,
                                        const std::vector<std::uint16_t>& v,
                                        std::vector<double>* log_sum_exp) {
  const std::vector<double> qd = widen(problem.dtype, q);
  const std::vector<double> kd = widen(problem.dtype, k);
  const std::vector<double> vd = widen(problem.dtype, v);
  const std::size_t q_head = static_cast<std::size_t>(problem.seq_q) * problem.head_dim;
  const std::size_t kv_head = static_cast<std::size_t>(problem.seq_kv) * problem.head_dim;
  const int heads = problem.batch * problem.heads;
  const int group = problem.query_heads_per_kv_head();
  std::vector<double> out(q_head * heads);
  if (log_sum_exp != nullptr)
    log_sum_exp->assign(static_cast<std::size_t>(problem.seq_q) * heads, 0);

  parallel_for(heads, 0, [&](std::size_t h) {
    // Query head h of batch b reads K/V head (h mod heads) / group of the same batch.
    const std::size_t batch = h / problem.heads;
    const std::size_t kv = batch * problem.kv_head_count() + (h % problem.heads) / group;
    attention_of_one_head(
        problem, qd.data() + h * q_head, kd.data() + kv * kv_head, vd.data() + kv * kv_head,
        out.data() + h * q_head,
        log_sum_exp == nullptr ? nullptr : log_sum_exp->data() + h * problem.seq_q);
  });
  return out;
}

OutputComparison compare_with_reference(const AttentionProblem& problem,
                                        const std::vector<std::uint16_t>& output,
                                        const std::vector<double>& reference) {
  OutputComparison result;
  double error_squared = 0;
  double reference_squared = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double got = element_to_float(problem.dtype, output[i]);
    if (!std::isfinite(got)) {
      ++result.non_finite;
      continue;
    }
    error_squared += (got - reference[i]) * (got - reference[i]);
    reference_squared += reference[i] * reference[i];
  }
  result.relative_error = reference_squared > 0 ? std::sqrt(error_squared / reference_squared)
                                                : std::sqrt(error_squared);
  return result;
}

double log_sum_exp_error(const std::vector<float>& log_sum_exp,
                         const std::vector<double>& reference) {
  double largest = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double got = log_sum_exp[i];
    if (std::isinf(reference[i]) && got == reference[i]) continue;  // a row that sees no key
    const double error = std::abs(got - reference[i]);
    if (std::isnan(error)) return std::numeric_limits<double>::infinity();
    largest = std::max(largest, error);
  }
  return largest;
}

double relative_error_tolerance(DataType type) {
  return type == DataType::f16 ? 2e-3 : 1e-2;
}

}  // namespace swr
