#include "swr/attention_problem.hpp"

#include <gtest/gtest.h>

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
  problem.head_dim = 96;
  EXPECT_EQ(usage_error_of(problem), "head dim 96 is not supported (allowed: 64, 128)");
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

}  // namespace
}  // namespace swr
