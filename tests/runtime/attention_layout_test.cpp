// Strides as launch arguments, checked without a GPU: the defaults are contiguous [B, H, S, D]
// (K and V over their K/V heads), [B, S, H, D] views are taken as they are, and what is not a
// layout (a D stride other than 1, overlapping rows, negative strides) or what a kernel cannot read
// (rows not on 16 bytes; anything strided for the wgmma path for now) is refused naming the value.
// The launch-argument block is filled from the problem (causal shift, K/V heads, scale).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "runtime/attention_launcher.hpp"
#include "runtime/attention_layout.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

AttentionProblem llama_prefill() {
  AttentionProblem problem{2, 32, 100, 300, 128, DataType::bf16, true};
  problem.kv_heads = 8;
  problem.causal_align = CausalAlignment::bottom_right;
  return problem;
}

std::string usage_error_of(const AttentionProblem& problem, const ElementStrides& q,
                           const ElementStrides& k = {}) {
  try {
    resolve_attention_layout(problem, q, k, {}, {});
  } catch (const UsageError& error) {
    return error.what();
  }
  return {};
}

bool equal(const attention::TensorStrides& a, const attention::TensorStrides& b) {
  return a.batch == b.batch && a.head == b.head && a.seq == b.seq;
}

TEST(AttentionLayout, DefaultsAreContiguousOverEachTensorsHeads) {
  const AttentionProblem problem = llama_prefill();
  const AttentionLayout layout = resolve_attention_layout(problem, {}, {}, {}, {});
  EXPECT_TRUE(equal(layout.q, {32LL * 100 * 128, 100LL * 128, 128}));
  EXPECT_TRUE(equal(layout.o, layout.q));
  EXPECT_TRUE(equal(layout.k, {8LL * 300 * 128, 300LL * 128, 128}));
  EXPECT_TRUE(equal(layout.v, layout.k));
  EXPECT_TRUE(is_contiguous(problem, layout));
}

TEST(AttentionLayout, BshdViewsAreTakenAsTheyAre) {
  const AttentionProblem problem = llama_prefill();
  // [B, S, H, D] seen as [B, H, S, D]: {S*H*D, D, H*D, 1}.
  const ElementStrides q{100LL * 32 * 128, 128, 32 * 128, 1};
  const ElementStrides k{300LL * 8 * 128, 128, 8 * 128, 1};
  const AttentionLayout layout = resolve_attention_layout(problem, q, k, k, q);
  EXPECT_TRUE(equal(layout.q, {100LL * 32 * 128, 128, 32 * 128}));
  EXPECT_TRUE(equal(layout.k, {300LL * 8 * 128, 128, 8 * 128}));
  EXPECT_FALSE(is_contiguous(problem, layout));
  // Explicit contiguous strides are the contiguous layout.
  const ElementStrides dense_q{32LL * 100 * 128, 100 * 128, 128, 1};
  EXPECT_TRUE(is_contiguous(problem, resolve_attention_layout(problem, dense_q, {}, {}, dense_q)));
}

TEST(AttentionLayout, RefusesWhatIsNotALayout) {
  const AttentionProblem problem = llama_prefill();
  EXPECT_EQ(usage_error_of(problem, {100LL * 32 * 256, 100 * 256, 256, 2}),
            "bad q strides {819200, 25600, 256, 2}: the head_dim stride must be 1");
  // Rows of 128 elements 64 apart overlap.
  const std::string overlap = usage_error_of(problem, {32LL * 100 * 64, 100 * 64, 64, 1});
  EXPECT_NE(overlap.find("the seq stride 64 overlaps rows that span 128 elements"),
            std::string::npos)
      << overlap;
  EXPECT_NE(usage_error_of(problem, {}, {300LL * 128, 0, 128, 1}).find("bad k strides"),
            std::string::npos);  // a head stride of 0 over 8 K/V heads
  EXPECT_NE(usage_error_of(problem, {-1, 100 * 128, 128, 1}).find("batch stride is negative"),
            std::string::npos);
  // A dimension of extent 1 may have any stride (PyTorch gives such views).
  AttentionProblem one = problem;
  one.batch = 1;
  EXPECT_EQ(usage_error_of(one, {7, 100 * 128, 128, 1}), "");
}

TEST(AttentionLayout, RefusesLayoutsTheKernelsCannotRead) {
  const AttentionProblem problem = llama_prefill();
  AttentionConfig mma_sync;
  AttentionBuffers buffers{256, 512, 1024, 2048, 0};
  const AttentionLayout dense = resolve_attention_layout(problem, {}, {}, {}, {});
  EXPECT_EQ(attention_layout_refusal(problem, mma_sync, dense, buffers), "");
  buffers.k = 520;  // 8 bytes off
  EXPECT_NE(attention_layout_refusal(problem, mma_sync, dense, buffers)
                .find("k at 520 is not 16-byte aligned"),
            std::string::npos);
  buffers.k = 512;
  AttentionLayout odd = dense;
  odd.q.seq = 132;  // rows 264 bytes apart
  EXPECT_NE(attention_layout_refusal(problem, mma_sync, odd, buffers)
                .find("q's seq stride 132 elements is not a multiple of 8"),
            std::string::npos);
  const AttentionConfig wgmma =
      *AttentionConfig::from_key("wgmma-m128n128s2-cyclic-grid-head_major");
  AttentionProblem mha = problem;
  mha.kv_heads = 0;
  const AttentionLayout bshd =
      resolve_attention_layout(mha, {100LL * 32 * 128, 128, 32 * 128, 1}, {}, {}, {});
  // The wgmma kernel reads Q, K and V by TMA, strided views included (issue 16's wgmma part), and
  // writes O in 4-byte pairs: only O's alignment and strides can refuse it.
  EXPECT_EQ(attention_layout_refusal(mha, wgmma, bshd, buffers), "");
  EXPECT_EQ(
      attention_layout_refusal(mha, wgmma, resolve_attention_layout(mha, {}, {}, {}, {}), buffers),
      "");
  AttentionBuffers odd_o = buffers;
  odd_o.o = 2050;
  EXPECT_NE(
      attention_layout_refusal(mha, wgmma, bshd, odd_o).find("o at 2050 is not 4-byte aligned"),
      std::string::npos);
}

TEST(AttentionLayout, LaunchArgumentsCarryTheShapeShiftAndLayout) {
  const AttentionProblem problem = llama_prefill();
  const AttentionLayout layout = resolve_attention_layout(problem, {}, {}, {}, {});
  const attention::AttentionArgs args = attention_launch_args(problem, layout, 4096, 264);
  EXPECT_EQ(args.batch, 2);
  EXPECT_EQ(args.heads, 32);
  EXPECT_EQ(args.kv_heads, 8);
  EXPECT_EQ(args.seq_q, 100);
  EXPECT_EQ(args.seq_kv, 300);
  EXPECT_EQ(args.causal_shift, 200);  // bottom-right: S_kv - S_q
  EXPECT_FLOAT_EQ(args.scale_log2, static_cast<float>(std::numbers::log2e / std::sqrt(128.0)));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(args.tile_counter), 4096u);
  EXPECT_EQ(args.wave_size, 264);
  EXPECT_TRUE(equal(args.k, layout.k));
  EXPECT_EQ(attention::kv_head_of(31, args.heads, args.kv_heads), 7);
  EXPECT_EQ(attention::kv_head_of(4, args.heads, args.kv_heads), 1);
  AttentionProblem top_left = problem;
  top_left.causal_align = CausalAlignment::top_left;
  EXPECT_EQ(attention_launch_args(top_left, layout, 0, 1).causal_shift, 0);
}

}  // namespace
}  // namespace swr
