// One attention forward problem: O = softmax(Q K^T * scale [+ causal mask]) V, tensors [B, H, S,
// D].
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "swr/data_type.hpp"
#include "swr/export.h"

namespace swr {

struct SWR_API AttentionProblem {
  int batch = 1;
  int heads = 1;
  int seq_q = 0;   // query rows per (batch, head)
  int seq_kv = 0;  // key/value rows per (batch, head)
  int head_dim = 64;
  DataType dtype = DataType::f16;
  // Top-left aligned causal mask: query row i sees key columns j <= i (PyTorch's is_causal).
  bool causal = false;

  // Throws UsageError naming the bad value and the allowed ones.
  void validate() const;

  // FlashAttention's convention: 4·B·H·S_q·S_kv·D, halved for causal.
  double flops() const;

  // Bytes of K and V of one (batch, head): what a head's q-tiles re-read.
  double kv_bytes_per_head() const;

  // e.g. "b8_h1_sq131072_skv131072_d128_f16_causal"
  std::string key() const;

  // {"batch", "heads", "seq_q", "seq_kv", "head_dim", "dtype", "causal"}: the one JSON form (the
  // worker protocol, `show --json`, the database's problems rows, the measured sweeps in
  // bench/results; compile results, catalog answers and exports add "key" and "family" to it, see
  // generator/problem_json.hpp). from_json throws
  // std::invalid_argument for an unknown dtype and nlohmann::json's errors for a missing field;
  // it does not validate (callers that take outside input call validate()).
  nlohmann::json to_json() const;
  static AttentionProblem from_json(const nlohmann::json& json);
};

// Head dims the template instantiates.
inline constexpr int kSupportedHeadDims[] = {64, 128};

}  // namespace swr
