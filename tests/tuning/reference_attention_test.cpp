// The CPU reference's log-sum-exp (what the GPU tests check the forward's against) on problems
// small enough to work out by hand, and the error measure that compares them.
#include "tuner/reference_attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "swr/sixteen_bit.hpp"

namespace swr {
namespace {

std::vector<std::uint16_t> elements(const std::vector<float>& values) {
  std::vector<std::uint16_t> out;
  for (float v : values) out.push_back(float_to_element(DataType::f16, v));
  return out;
}

// D = 4, so the scale is 1/2. Query row 0 is zero: every score 0, L = ln(keys seen). Row 1 is
// 2 e_0 against keys 0, 1, 2 of first column 0, 1, 2: scores 0, 1, 2.
TEST(ReferenceAttention, LogSumExpOfEachRowAsWorkedOut) {
  AttentionProblem problem{1, 1, 2, 3, 4, DataType::f16, false};
  const auto q = elements({0, 0, 0, 0, 2, 0, 0, 0});
  const auto k = elements({0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0});
  const auto v = elements({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
  std::vector<double> lse;
  const std::vector<double> out = reference_attention(problem, q, k, v, &lse);
  ASSERT_EQ(lse.size(), 2u);
  EXPECT_NEAR(lse[0], std::log(3.0), 1e-12);
  EXPECT_NEAR(lse[1], std::log(1.0 + std::exp(1.0) + std::exp(2.0)), 1e-12);
  EXPECT_NEAR(out[0], 1.0 / 3, 1e-12);                    // row 0 averages the three values
  EXPECT_EQ(out, reference_attention(problem, q, k, v));  // the output does not depend on it

  // Causal, top-left: row 0 sees key 0 alone (L = its score, 0), row 1 keys 0 and 1.
  problem.causal = true;
  reference_attention(problem, q, k, v, &lse);
  EXPECT_NEAR(lse[0], 0.0, 1e-12);
  EXPECT_NEAR(lse[1], std::log(1.0 + std::exp(1.0)), 1e-12);
}

TEST(ReferenceAttention, RowsThatSeeNoKeyHaveInfiniteLogSumExp) {
  // Bottom-right with S_q = 3 > S_kv = 1: rows 0 and 1 see no key, row 2 sees key 0.
  AttentionProblem problem{1, 1, 3, 1, 4, DataType::f16, true};
  problem.causal_align = CausalAlignment::bottom_right;
  const auto q = elements(std::vector<float>(12, 0.5f));
  const auto k = elements({1, 1, 1, 1});
  const auto v = elements({3, 3, 3, 3});
  std::vector<double> lse;
  const std::vector<double> out = reference_attention(problem, q, k, v, &lse);
  EXPECT_EQ(lse[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(lse[1], std::numeric_limits<double>::infinity());
  EXPECT_NEAR(lse[2], 1.0, 1e-12);  // (4 * 0.5) / 2
  EXPECT_EQ(out[0], 0.0);
  EXPECT_NEAR(out[8], 3.0, 1e-12);
}

TEST(ReferenceAttention, LogSumExpErrorIsTheLargestGapAndInfiniteForNaNOrOneInfiniteSide) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> reference = {1.0, -2.0, inf};
  EXPECT_EQ(log_sum_exp_error({1.0f, -2.0f, INFINITY}, reference), 0.0);
  EXPECT_NEAR(log_sum_exp_error({1.25f, -2.5f, INFINITY}, reference), 0.5, 1e-12);
  EXPECT_EQ(log_sum_exp_error({1.0f, -2.0f, 7.0f}, reference), inf);  // unwritten: finite
  EXPECT_EQ(log_sum_exp_error({NAN, -2.0f, INFINITY}, reference), inf);
  EXPECT_EQ(log_sum_exp_error({1.0f, -2.0f, -INFINITY}, reference), inf);
}

}  // namespace
}  // namespace swr
