#include "swr/attention_problem.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "swr/data_type.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

AttentionProblem valid_problem() {
  return {.batch = 8,
          .heads = 1,
          .seq_q = 131072,
          .seq_kv = 131072,
          .head_dim = 128,
          .dtype = DataType::f16,
          .causal = true};
}

std::string usage_error_of(const AttentionProblem& problem) {
  try {
    problem.validate();
  } catch (const UsageError& error) {
    return error.what();
  }
  return {};
}

TEST(DataType, NamesAndAliases) {
  EXPECT_EQ(to_string(DataType::f16), "f16");
  EXPECT_EQ(to_string(DataType::bf16), "bf16");
  for (const char* text : {"f16", "fp16", "half", "FP16", "float16"}) {
    EXPECT_EQ(parse_data_type(text), DataType::f16) << text;
  }
  for (const char* text : {"bf16", "bfloat16", "BF16"}) {
    EXPECT_EQ(parse_data_type(text), DataType::bf16) << text;
  }
  for (const char* text : {"", "f32", "fp8", "bf", "f16 "}) {
    EXPECT_FALSE(parse_data_type(text).has_value()) << text;
  }
  EXPECT_EQ(element_bytes(DataType::f16), 2u);
  EXPECT_EQ(element_bytes(DataType::bf16), 2u);
}

TEST(AttentionProblem, ValidProblemPasses) {
  EXPECT_NO_THROW(valid_problem().validate());
}

TEST(AttentionProblem, RejectsNonPositiveSizesNamingTheValue) {
  AttentionProblem problem = valid_problem();
  problem.batch = 0;
  EXPECT_EQ(usage_error_of(problem), "batch must be at least 1 (got 0)");
  problem = valid_problem();
  problem.heads = -3;
  EXPECT_EQ(usage_error_of(problem), "heads must be at least 1 (got -3)");
  problem = valid_problem();
  problem.seq_q = 0;
  EXPECT_EQ(usage_error_of(problem), "seq_q must be at least 1 (got 0)");
  problem = valid_problem();
  problem.seq_kv = -1;
  EXPECT_EQ(usage_error_of(problem), "seq_kv must be at least 1 (got -1)");
}

TEST(AttentionProblem, RejectsUnsupportedHeadDim) {
  AttentionProblem problem = valid_problem();
  for (int dim : {32, 64, 80, 96, 128, 160, 192, 256}) {
    problem.head_dim = dim;
    EXPECT_NO_THROW(problem.validate()) << dim;
  }
  problem.head_dim = 48;
  EXPECT_EQ(usage_error_of(problem),
            "head dim 48 is not supported (allowed: 32, 64, 80, 96, 128, 160, 192, 256)");
}

TEST(AttentionProblem, KvHeadsMustDivideTheHeads) {
  AttentionProblem problem = valid_problem();
  problem.heads = 32;
  for (int kv : {0, 1, 2, 8, 32}) {
    problem.kv_heads = kv;
    EXPECT_NO_THROW(problem.validate()) << kv;
  }
  problem.kv_heads = 0;
  EXPECT_EQ(problem.kv_head_count(), 32);
  EXPECT_EQ(problem.query_heads_per_kv_head(), 1);
  problem.kv_heads = 8;
  EXPECT_EQ(problem.kv_head_count(), 8);
  EXPECT_EQ(problem.query_heads_per_kv_head(), 4);
  problem.kv_heads = 6;
  EXPECT_EQ(usage_error_of(problem),
            "kv_heads 6 does not divide heads 32 (allowed: 1, 2, 4, 8, 16, 32, or 0 for the same "
            "as heads)");
  problem.kv_heads = 64;
  EXPECT_NE(usage_error_of(problem).find("kv_heads 64 does not divide heads 32"),
            std::string::npos);
  problem.kv_heads = -1;
  EXPECT_NE(usage_error_of(problem).find("kv_heads -1"), std::string::npos);
}

TEST(AttentionProblem, CausalAlignment) {
  AttentionProblem problem = valid_problem();
  problem.seq_q = 1000;
  problem.seq_kv = 4000;
  EXPECT_EQ(problem.causal_shift(), 0);
  problem.causal_align = CausalAlignment::bottom_right;
  EXPECT_NO_THROW(problem.validate());
  EXPECT_EQ(problem.effective_causal_align(), CausalAlignment::bottom_right);
  EXPECT_EQ(problem.causal_shift(), 3000);
  // S_q > S_kv is allowed: the first S_q - S_kv rows see no key (FlashAttention's definition).
  problem.seq_q = 5000;
  EXPECT_NO_THROW(problem.validate());
  EXPECT_EQ(problem.causal_shift(), -1000);
  // Equal lengths: the same mask as top-left, so the same problem.
  problem.seq_q = problem.seq_kv;
  EXPECT_EQ(problem.effective_causal_align(), CausalAlignment::top_left);
  EXPECT_EQ(problem.causal_shift(), 0);
  problem.causal = false;
  EXPECT_EQ(usage_error_of(problem),
            "causal alignment bottom_right without a causal mask (allowed: top_left, or causal)");
  EXPECT_EQ(parse_causal_alignment("bottom_right"), CausalAlignment::bottom_right);
  EXPECT_EQ(parse_causal_alignment("top_left"), CausalAlignment::top_left);
  EXPECT_FALSE(parse_causal_alignment("bottom-right").has_value());
  EXPECT_EQ(to_string(CausalAlignment::bottom_right), "bottom_right");
}

TEST(AttentionProblem, RejectsRowCountsBeyondInt) {
  AttentionProblem problem = valid_problem();
  problem.batch = 1024;
  problem.heads = 1024;
  problem.seq_q = 4096;  // 2^32 rows
  problem.seq_kv = 1024;
  const std::string message = usage_error_of(problem);
  EXPECT_NE(message.find("seq_q 4096"), std::string::npos) << message;
  EXPECT_NE(message.find("at most 2047"), std::string::npos) << message;
  problem.seq_q = 2047;
  EXPECT_NO_THROW(problem.validate());
  problem.seq_kv = 2048;
  EXPECT_NE(usage_error_of(problem).find("seq_kv 2048"), std::string::npos);
}

TEST(AttentionProblem, FlopsFollowFlashAttentionConvention) {
  AttentionProblem problem = valid_problem();
  problem.causal = false;
  const double full = 4.0 * 8 * 1 * 131072.0 * 131072.0 * 128;
  EXPECT_DOUBLE_EQ(problem.flops(), full);
  problem.causal = true;
  EXPECT_DOUBLE_EQ(problem.flops(), full / 2);
}

TEST(AttentionProblem, KvBytesPerHead) {
  AttentionProblem problem = valid_problem();
  EXPECT_DOUBLE_EQ(problem.kv_bytes_per_head(), 64.0 * 1024 * 1024);  // K + V, 131072 x 128 x 2 B
  problem.head_dim = 64;
  problem.seq_kv = 1000;
  EXPECT_DOUBLE_EQ(problem.kv_bytes_per_head(), 2.0 * 1000 * 64 * 2);
}

TEST(AttentionProblem, Key) {
  AttentionProblem problem = valid_problem();
  EXPECT_EQ(problem.key(), "b8_h1_sq131072_skv131072_d128_f16_causal");
  problem.causal = false;
  problem.dtype = DataType::bf16;
  problem.seq_kv = 1000;
  EXPECT_EQ(problem.key(), "b8_h1_sq131072_skv1000_d128_bf16_noncausal");
}

// Multi-head, top-left problems keep the keys and JSON forms every build before kv_heads and
// causal_align wrote; GQA and an effective bottom-right mask add to them; a form without the new
// fields reads as multi-head top-left.
TEST(AttentionProblem, KeyAndJsonOfGroupedHeadsAndAlignment) {
  AttentionProblem problem{2, 32, 1024, 4096, 128, DataType::f16, true};  // aggregate as before
  EXPECT_EQ(problem.kv_heads, 0);
  EXPECT_EQ(problem.causal_align, CausalAlignment::top_left);
  EXPECT_EQ(problem.key(), "b2_h32_sq1024_skv4096_d128_f16_causal");
  EXPECT_EQ(problem.to_json().dump(),
            R"({"batch":2,"causal":true,"dtype":"f16","head_dim":128,"heads":32,)"
            R"("seq_kv":4096,"seq_q":1024})");
  problem.kv_heads = 32;  // said explicitly: still multi-head, the same problem
  EXPECT_EQ(problem.key(), "b2_h32_sq1024_skv4096_d128_f16_causal");
  EXPECT_FALSE(problem.to_json().contains("kv_heads"));

  problem.kv_heads = 8;
  problem.causal_align = CausalAlignment::bottom_right;
  EXPECT_EQ(problem.key(), "b2_h32_kv8_sq1024_skv4096_d128_f16_causal_br");
  const nlohmann::json json = problem.to_json();
  EXPECT_EQ(json.at("kv_heads"), 8);
  EXPECT_EQ(json.at("causal_align"), "bottom_right");
  const AttentionProblem read = AttentionProblem::from_json(json);
  EXPECT_EQ(read.key(), problem.key());
  EXPECT_EQ(read.kv_heads, 8);
  EXPECT_EQ(read.causal_align, CausalAlignment::bottom_right);

  problem.kv_heads = 1;  // MQA
  problem.seq_q = problem.seq_kv;
  EXPECT_EQ(problem.key(), "b2_h32_kv1_sq4096_skv4096_d128_f16_causal");
  EXPECT_FALSE(problem.to_json().contains("causal_align"));

  nlohmann::json old_form = nlohmann::json::parse(
      R"({"batch":8,"heads":4,"seq_q":100,"seq_kv":100,"head_dim":64,"dtype":"f16","causal":false})");
  const AttentionProblem old = AttentionProblem::from_json(old_form);
  EXPECT_EQ(old.kv_head_count(), 4);
  EXPECT_EQ(old.causal_align, CausalAlignment::top_left);
  EXPECT_EQ(old.key(), "b8_h4_sq100_skv100_d64_f16_noncausal");
  old_form["causal_align"] = "diagonal";
  EXPECT_THROW(AttentionProblem::from_json(old_form), std::invalid_argument);
  old_form["causal_align"] = "top_left";
  old_form["kv_heads"] = 2.5;
  EXPECT_THROW(AttentionProblem::from_json(old_form), std::invalid_argument);
}

}  // namespace
}  // namespace swr
