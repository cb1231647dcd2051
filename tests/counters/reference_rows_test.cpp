// Which output rows the GPU reference checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tuner/attention_reference_kernel.hpp"

namespace swr {
namespace {

AttentionProblem problem(int batch, int heads, int seq, bool causal = false) {
  return {batch, heads, seq, seq, 128, DataType::f16, causal};
}

TEST(SampleReferenceRows, TakesFirstLastAndTileBoundaryRowsOfEveryHead) {
  const AttentionProblem p = problem(8, 1, 131072, true);
  const std::vector<std::int64_t> rows = sample_reference_rows(p, 7);
  EXPECT_EQ(rows.size(), 8u * 64);
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  EXPECT_EQ(std::set<std::int64_t>(rows.begin(), rows.end()).size(), rows.size());
  for (std::int64_t head = 0; head < 8; ++head) {
    const std::int64_t first = head * p.seq_q;
    const std::int64_t last = first + p.seq_q - 1;
    EXPECT_TRUE(std::binary_search(rows.begin(), rows.end(), first)) << head;
    EXPECT_TRUE(std::binary_search(rows.begin(), rows.end(), last)) << head;
    int boundary_pairs = 0;
    for (std::int64_t row : rows) {
      if (row <= first || row > last || (row - first) % 64 != 0) continue;
      if (std::binary_search(rows.begin(), rows.end(), row - 1)) ++boundary_pairs;
    }
    EXPECT_GE(boundary_pairs, 4) << "head " << head;
  }
  EXPECT_GE(rows.front(), 0);
  EXPECT_LT(rows.back(), 8LL * p.seq_q);
}

TEST(SampleReferenceRows, SameSeedSameRowsOtherSeedOtherRows) {
  const AttentionProblem p = problem(2, 4, 4096);
  EXPECT_EQ(sample_reference_rows(p, 1), sample_reference_rows(p, 1));
  EXPECT_NE(sample_reference_rows(p, 1), sample_reference_rows(p, 2));
}

TEST(SampleReferenceRows, ShortSequencesAreCheckedWhole) {
  const AttentionProblem p = problem(1, 2, 40);
  const std::vector<std::int64_t> rows = sample_reference_rows(p, 3);
  EXPECT_EQ(rows.size(), 80u);
  const AttentionProblem single = problem(3, 1, 1);
  EXPECT_EQ(sample_reference_rows(single, 3), (std::vector<std::int64_t>{0, 1, 2}));
}

TEST(SampleReferenceRows, ManyHeadsShareTheCap) {
  // 4096 heads: fewer rows per head, then a subset of heads, the first and last always.
  const AttentionProblem p = problem(64, 64, 2048);
  const std::vector<std::int64_t> rows = sample_reference_rows(p, 5, 64, 4096);
  EXPECT_LE(rows.size(), 4096u);
  EXPECT_GE(rows.size(), 2048u);
  std::set<std::int64_t> heads;
  for (std::int64_t row : rows) heads.insert(row / p.seq_q);
  EXPECT_TRUE(heads.count(0));
  EXPECT_TRUE(heads.count(64 * 64 - 1));
  for (std::int64_t head : heads) {
    EXPECT_TRUE(std::binary_search(rows.begin(), rows.end(), head * p.seq_q)) << head;
    EXPECT_TRUE(std::binary_search(rows.begin(), rows.end(), head * p.seq_q + p.seq_q - 1)) << head;
  }
  const AttentionProblem moderate = problem(16, 16, 4096);  // 256 heads x 16 rows
  EXPECT_EQ(sample_reference_rows(moderate, 5, 64, 4096).size(), 4096u);
}

TEST(SampleReferenceRows, RefusesShapesTheKernelCannotTake) {
  AttentionProblem p = problem(1, 1, 128);
  p.head_dim = 100;
  EXPECT_THROW(sample_reference_rows(p, 1), std::invalid_argument);
  p.head_dim = 512;
  EXPECT_THROW(sample_reference_rows(p, 1), std::invalid_argument);
}

}  // namespace
}  // namespace swr
