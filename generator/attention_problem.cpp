#include "swr/attention_problem.hpp"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "generator/json_int_field.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

void require_positive(const char* name, int value) {
  if (value < 1) {
    throw UsageError(std::string(name) + " must be at least 1 (got " + std::to_string(value) + ")");
  }
}

// The kernel indexes rows of [B, H, S, D] with 64-bit offsets, but tile and row counters
// (batch * heads * tiles, batch * heads * seq) are 32-bit ints: keep them below 2^31.
void require_rows_fit_int(const char* seq_name, int seq, int batch, int heads) {
  const std::int64_t pairs = static_cast<std::int64_t>(batch) * heads;
  const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
  if (pairs * seq > limit) {
    throw UsageError(
        std::string(seq_name) + " " + std::to_string(seq) + " is too large for batch " +
        std::to_string(batch) + " x heads " + std::to_string(heads) + ": batch*heads*" + seq_name +
        " must stay below 2^31 (" + seq_name + " at most " + std::to_string(limit / pairs) + ")");
  }
}

constexpr const char* kBottomRightKeySuffix = "_br";

}  // namespace

std::string supported_head_dims_text() {
  std::string text;
  for (int dim : kSupportedHeadDims) {
    if (!text.empty()) text += ", ";
    text += std::to_string(dim);
  }
  return text;
}

std::string kv_head_counts_text(int heads) {
  std::string text;
  for (int divisor = 1; divisor <= heads && text.size() < 200; ++divisor) {
    if (heads % divisor != 0) continue;
    if (!text.empty()) text += ", ";
    text += std::to_string(divisor);
  }
  return text;
}

std::string_view to_string(CausalAlignment alignment) {
  return alignment == CausalAlignment::bottom_right ? "bottom_right" : "top_left";
}

std::optional<CausalAlignment> parse_causal_alignment(std::string_view text) {
  if (text == "top_left") return CausalAlignment::top_left;
  if (text == "bottom_right") return CausalAlignment::bottom_right;
  return std::nullopt;
}

int AttentionProblem::query_heads_per_kv_head() const {
  const int kv = kv_head_count();
  return kv > 0 && heads % kv == 0 ? heads / kv : 1;
}

CausalAlignment AttentionProblem::effective_causal_align() const {
  return causal && causal_align == CausalAlignment::bottom_right && seq_q != seq_kv
             ? CausalAlignment::bottom_right
             : CausalAlignment::top_left;
}

int AttentionProblem::causal_shift() const {
  return effective_causal_align() == CausalAlignment::bottom_right ? seq_kv - seq_q : 0;
}

void AttentionProblem::validate() const {
  require_positive("batch", batch);
  require_positive("heads", heads);
  require_positive("seq_q", seq_q);
  require_positive("seq_kv", seq_kv);
  if (kv_heads < 0 || (kv_heads > 0 && heads % kv_heads != 0)) {
    throw UsageError("kv_heads " + std::to_string(kv_heads) + " does not divide heads " +
                     std::to_string(heads) + " (allowed: " + kv_head_counts_text(heads) +
                     ", or 0 for the same as heads)");
  }
  if (causal_align != CausalAlignment::top_left && causal_align != CausalAlignment::bottom_right) {
    throw UsageError("unknown causal alignment (allowed: top_left, bottom_right)");
  }
  if (!causal && causal_align == CausalAlignment::bottom_right) {
    throw UsageError(
        "causal alignment bottom_right without a causal mask (allowed: top_left, or causal)");
  }
  bool supported = false;
  for (int dim : kSupportedHeadDims) supported = supported || dim == head_dim;
  if (!supported) {
    throw UsageError("head dim " + std::to_string(head_dim) +
                     " is not supported (allowed: " + supported_head_dims_text() + ")");
  }
  if (dtype != DataType::f16 && dtype != DataType::bf16) {
    throw UsageError("unsupported data type (allowed: f16, bf16)");
  }
  if (static_cast<std::int64_t>(batch) * heads > std::numeric_limits<std::int32_t>::max()) {
    throw UsageError("batch " + std::to_string(batch) + " x heads " + std::to_string(heads) +
                     " must stay below 2^31");
  }
  require_rows_fit_int("seq_q", seq_q, batch, heads);
  require_rows_fit_int("seq_kv", seq_kv, batch, heads);
}

double AttentionProblem::flops() const {
  const double full = 4.0 * batch * heads * static_cast<double>(seq_q) * seq_kv * head_dim;
  return causal ? full / 2 : full;
}

double AttentionProblem::kv_bytes_per_head() const {
  return 2.0 * seq_kv * head_dim * static_cast<double>(element_bytes(dtype));
}

std::string AttentionProblem::key() const {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string key = "b";
  key += std::to_string(batch);
  key += "_h" + std::to_string(heads);
  if (kv_head_count() != heads) key += "_kv" + std::to_string(kv_head_count());
  key += "_sq" + std::to_string(seq_q);
  key += "_skv" + std::to_string(seq_kv);
  key += "_d" + std::to_string(head_dim);
  key += "_";
  key += to_string(dtype);
  key += causal ? "_causal" : "_noncausal";
  if (effective_causal_align() == CausalAlignment::bottom_right) key += kBottomRightKeySuffix;
  return key;
}

nlohmann::json AttentionProblem::to_json() const {
  nlohmann::json json = {{"batch", batch},       {"heads", heads},
                         {"seq_q", seq_q},       {"seq_kv", seq_kv},
                         {"head_dim", head_dim}, {"dtype", std::string(to_string(dtype))},
                         {"causal", causal}};
  // Only where they differ from what a problem without them meant: the form of every multi-head,
  // top-left problem stays the one stored before they existed.
  if (kv_head_count() != heads) json["kv_heads"] = kv_head_count();
  if (effective_causal_align() == CausalAlignment::bottom_right) {
    json["causal_align"] = std::string(to_string(CausalAlignment::bottom_right));
  }
  return json;
}

AttentionProblem AttentionProblem::from_json(const nlohmann::json& json) {
  AttentionProblem problem;
  problem.batch = json_int_field(json, "batch");
  problem.heads = json_int_field(json, "heads");
  problem.seq_q = json_int_field(json, "seq_q");
  problem.seq_kv = json_int_field(json, "seq_kv");
  problem.head_dim = json_int_field(json, "head_dim");
  const std::string type = json.at("dtype").get<std::string>();
  const std::optional<DataType> parsed = parse_data_type(type);
  if (!parsed) throw std::invalid_argument("unknown dtype '" + type + "' in a problem");
  problem.dtype = *parsed;
  problem.causal = json.at("causal").get<bool>();
  if (json.contains("kv_heads")) problem.kv_heads = json_int_field(json, "kv_heads");
  if (const auto align = json.find("causal_align"); align != json.end()) {
    const std::optional<CausalAlignment> parsed =
        align->is_string() ? parse_causal_alignment(align->get<std::string>()) : std::nullopt;
    if (!parsed) {
      throw std::invalid_argument(
          "problem field \"causal_align\" must be top_left or "
          "bottom_right (got " +
          align->dump() + ")");
    }
    problem.causal_align = *parsed;
  }
  return problem;
}

}  // namespace swr
