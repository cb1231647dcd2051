// One attention forward problem: O = softmax(Q K^T * scale [+ causal mask]) V, Q and O
// [B, H, S_q, D], K and V [B, H_kv, S_kv, D] (H_kv = H: multi-head; H_kv < H: grouped-query, each
// K/V head serving H / H_kv consecutive query heads; H_kv = 1: multi-query).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "swr/data_type.hpp"
#include "swr/export.h"

namespace swr {

// Where the causal diagonal lies when S_q != S_kv. top_left: query row i sees keys j <= i
// (PyTorch's is_causal). bottom_right: query row i sees keys j <= i + S_kv - S_q, the last query
// row sees every key (prefill over a KV cache; FlashAttention's causal, PyTorch's
// causal_lower_right). With S_q > S_kv the first S_q - S_kv rows of a bottom-right mask see no key
// and their output is 0, as FlashAttention defines it. With S_q = S_kv both are the same mask.
enum class CausalAlignment { top_left, bottom_right };

SWR_API std::string_view to_string(CausalAlignment alignment);
SWR_API std::optional<CausalAlignment> parse_causal_alignment(std::string_view text);

struct SWR_API AttentionProblem {
  int batch = 1;
  int heads = 1;   // query heads
  int seq_q = 0;   // query rows per (batch, head)
  int seq_kv = 0;  // key/value rows per (batch, K/V head)
  int head_dim = 64;
  DataType dtype = DataType::f16;
  bool causal = false;
  // K/V heads; 0 (the default) means `heads` (multi-head). Otherwise heads % kv_heads == 0.
  // Last, so that every aggregate initialisation written before it existed means what it meant.
  int kv_heads = 0;
  // Only with causal (validate() refuses bottom_right without it).
  CausalAlignment causal_align = CausalAlignment::top_left;

  // Throws UsageError naming the bad value and the allowed ones.
  void validate() const;

  // K/V heads however given: kv_heads, or heads when it is 0.
  int kv_head_count() const { return kv_heads == 0 ? heads : kv_heads; }
  // Query heads per K/V head (1 for multi-head).
  int query_heads_per_kv_head() const;
  // bottom_right only where it changes the mask (causal, S_q != S_kv), else top_left: what the key,
  // the JSON form, the database and the nearest-shape rule compare, so that the same mask is one
  // problem however it was asked for.
  CausalAlignment effective_causal_align() const;
  // Query row i sees keys j <= i + causal_shift(): S_kv - S_q for the effective bottom-right
  // alignment, else 0 (a launch argument; no kernel compiles it in).
  int causal_shift() const;

  // FlashAttention's convention: 4·B·H·S_q·S_kv·D, halved for causal (the mask's visible half,
  // whatever its alignment).
  double flops() const;

  // Bytes of K and V of one (batch, K/V head): what the query heads sharing it re-read.
  double kv_bytes_per_head() const;

  // e.g. "b8_h1_sq131072_skv131072_d128_f16_causal"; GQA/MQA adds "_kv{H_kv}" after the heads
  // ("b1_h32_kv8_sq..."), an effective bottom-right mask ends in "_causal_br". Multi-head,
  // top-left keys are the ones every build before these fields wrote.
  std::string key() const;

  // {"batch", "heads", "seq_q", "seq_kv", "head_dim", "dtype", "causal"}, plus "kv_heads" for
  // GQA/MQA and "causal_align": "bottom_right" where it is effective: the one JSON form (the
  // worker protocol, `show --json`, the database's problems rows, the measured sweeps in
  // bench/results; compile results, catalog answers and exports add "key" and "family" to it, see
  // generator/problem_json.hpp). A multi-head top-left problem's form is the one written before
  // the two fields existed, and a form without them reads as such. from_json throws
  // std::invalid_argument for an unknown dtype or alignment and nlohmann::json's errors for a
  // missing field; it does not validate (callers that take outside input call validate()).
  nlohmann::json to_json() const;
  static AttentionProblem from_json(const nlohmann::json& json);
};

// Head dims the mma.sync template instantiates, on every GPU (the wgmma path's own limits are in
// the resource model).
inline constexpr int kSupportedHeadDims[] = {32, 64, 80, 96, 128, 160, 192, 256};

// "32, 64, ...": the list as messages name it.
SWR_API std::string supported_head_dims_text();
// "1, 2, 4, 8": the K/V head counts `heads` query heads allow (its divisors), as messages name
// them.
SWR_API std::string kv_head_counts_text(int heads);

}  // namespace swr
