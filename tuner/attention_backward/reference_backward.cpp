#include "tuner/attention_backward/reference_backward.hpp"

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

// One query head: its rows' L, its dQ, and its shares of its K/V head's dK and dV (added into
// dk_share and dv_share, which belong to this query head alone).
void backward_of_one_head(const AttentionProblem& p, const double* q, const double* k,
                          const double* v, const double* d_o, double* lse, double* dq,
                          double* dk_share, double* dv_share) {
  const int d = p.head_dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const int shift = p.causal_shift();
  std::vector<double> prob(p.seq_kv), dp(p.seq_kv), out(d);
  for (int i = 0; i < p.seq_q; ++i) {
    const int visible = p.causal ? std::clamp(i + 1 + shift, 0, p.seq_kv) : p.seq_kv;
    const double* q_row = q + static_cast<std::size_t>(i) * d;
    const double* do_row = d_o + static_cast<std::size_t>(i) * d;
    double* dq_row = dq + static_cast<std::size_t>(i) * d;
    std::fill(dq_row, dq_row + d, 0.0);
    if (visible == 0) {
      lse[i] = std::numeric_limits<double>::infinity();
      continue;
    }
    double max_score = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < visible; ++j) {
      double dot = 0;
      for (int c = 0; c < d; ++c) dot += q_row[c] * k[static_cast<std::size_t>(j) * d + c];
      prob[j] = dot * scale;
      max_score = std::max(max_score, prob[j]);
    }
    double sum = 0;
    for (int j = 0; j < visible; ++j) sum += std::exp(prob[j] - max_score);
    lse[i] = max_score + std::log(sum);
    std::fill(out.begin(), out.end(), 0.0);
    for (int j = 0; j < visible; ++j) {
      prob[j] = std::exp(prob[j] - lse[i]);
      for (int c = 0; c < d; ++c) out[c] += prob[j] * v[static_cast<std::size_t>(j) * d + c];
    }
    double delta = 0;
    for (int c = 0; c < d; ++c) delta += do_row[c] * out[c];
    for (int j = 0; j < visible; ++j) {
      double dot = 0;
      for (int c = 0; c < d; ++c) dot += do_row[c] * v[static_cast<std::size_t>(j) * d + c];
      const double ds = prob[j] * (dot - delta);
      const double* k_row = k + static_cast<std::size_t>(j) * d;
      double* dk_row = dk_share + static_cast<std::size_t>(j) * d;
      double* dv_row = dv_share + static_cast<std::size_t>(j) * d;
      for (int c = 0; c < d; ++c) {
        dq_row[c] += scale * ds * k_row[c];
        dk_row[c] += scale * ds * q_row[c];
        dv_row[c] += prob[j] * do_row[c];
      }
    }
  }
}

}  // namespace

BackwardReference reference_attention_backward(const AttentionProblem& problem,
                                               const std::vector<std::uint16_t>& q,
                                               const std::vector<std::uint16_t>& k,
                                               const std::vector<std::uint16_t>& v,
                                               const std::vector<std::uint16_t>& d_o) {
  const std::vector<double> qd = widen(problem.dtype, q);
  const std::vector<double> kd = widen(problem.dtype, k);
  const std::vector<double> vd = widen(problem.dtype, v);
  const std::vector<double> dod = widen(problem.dtype, d_o);
  const std::size_t q_head = static_cast<std::size_t>(problem.seq_q) * problem.head_dim;
  const std::size_t kv_head = static_cast<std::size_t>(problem.seq_kv) * problem.head_dim;
  const int heads = problem.batch * problem.heads;
  const int kv_heads = problem.batch * problem.kv_head_count();
  const int group = problem.query_heads_per_kv_head();
  BackwardReference reference;
  reference.lse.resize(static_cast<std::size_t>(heads) * problem.seq_q);
  reference.dq.resize(q_head * heads);
  // Each query head's shares apart, summed per K/V head below: no two threads add into one.
  std::vector<double> dk_shares(kv_head * heads, 0.0), dv_shares(kv_head * heads, 0.0);
  const auto kv_of = [&](std::size_t h) {
    return (h / problem.heads) * problem.kv_head_count() + (h % problem.heads) / group;
  };
  parallel_for(heads, 0, [&](std::size_t h) {
    const std::size_t kv = kv_of(h);
    backward_of_one_head(problem, qd.data() + h * q_head, kd.data() + kv * kv_head,
                         vd.data() + kv * kv_head, dod.data() + h * q_head,
                         reference.lse.data() + h * problem.seq_q, reference.dq.data() + h * q_head,
                         dk_shares.data() + h * kv_head, dv_shares.data() + h * kv_head);
  });
  reference.dk.assign(kv_head * kv_heads, 0.0);
  reference.dv.assign(kv_head * kv_heads, 0.0);
  for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
    const std::size_t kv = kv_of(h);
    for (std::size_t e = 0; e < kv_head; ++e) {
      reference.dk[kv * kv_head + e] += dk_shares[h * kv_head + e];
      reference.dv[kv * kv_head + e] += dv_shares[h * kv_head + e];
    }
  }
  return reference;
}

}  // namespace swr
