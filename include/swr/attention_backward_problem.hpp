// One attention backward problem: given Q, K, V, the forward's O and per-row log-sum-exp L and
// the gradient dO, compute dQ, dK and dV of O = softmax(Q K^T * scale [+ causal mask]) V. Its
// shape is the forward's (swr::AttentionProblem: Q, O, dO, dQ [B, H, S_q, D]; K, V, dK, dV
// [B, H_kv, S_kv, D]); dK and dV of a GQA K/V head sum its query heads' shares.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "swr/attention_problem.hpp"
#include "swr/export.h"

namespace swr {

struct SWR_API AttentionBackwardProblem {
  AttentionProblem shape;

  // The shape's rules (AttentionProblem::validate): UsageError naming the bad value.
  void validate() const;
  // "bwd_" + the shape's key, e.g. "bwd_b2_h16_sq16384_skv16384_d128_bf16_causal".
  std::string key() const;
  // The backward's five products of the forward's size: 2.5x the forward's FLOPs (the
  // convention every peer's figures use).
  double flops() const;
  // The shape's JSON form (AttentionProblem::to_json): the family tells the passes apart.
  nlohmann::json to_json() const;
  static AttentionBackwardProblem from_json(const nlohmann::json& json);

  bool operator==(const AttentionBackwardProblem& other) const {
    return shape.key() == other.shape.key();
  }
};

inline constexpr const char* kAttentionBackwardKeyPrefix = "bwd_";
// The backward's work over the forward's, in FLOPs (S, dP, dV, dK, dQ against S, O).
inline constexpr double kBackwardFlopsFactor = 2.5;

}  // namespace swr
