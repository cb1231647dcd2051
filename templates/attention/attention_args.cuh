// What an attention kernel of either instruction path receives at launch besides its tensors:
// the shape that is not compiled in (batch, heads, K/V heads, lengths), where the causal diagonal
// lies, and how Q, K, V and O are laid out in memory. One definition, compiled by NVRTC for the
// kernels and by the host compiler for the launchers, so the two can never disagree on the
// layout of the parameter block (cuLaunchKernel copies it byte for byte).
#pragma once

#include "common/host_device.cuh"

namespace swr {
namespace attention {

// Element strides of a [B, H, S, D] view (D has stride 1): contiguous BHSD is
// {H*S*D, S*D, D}; a [B, S, H, D] projection seen as BHSD is {S*H*D, D, H*D}.
struct TensorStrides {
  long long batch;
  long long head;
  long long seq;
};

SWR_HOST_DEVICE long long row_offset(const TensorStrides& strides, int batch, int head, int row) {
  return batch * strides.batch + head * strides.head + row * strides.seq;
}

struct AttentionArgs {
  int batch;
  int heads;     // query heads
  int kv_heads;  // K/V heads: heads % kv_heads == 0 (kv_heads == heads: MHA, 1: MQA)
  int seq_q;
  int seq_kv;
  // Causal only: query row i sees key columns j <= i + causal_shift. 0 aligns the diagonal
  // top-left (PyTorch's is_causal); seq_kv - seq_q aligns it bottom-right (prefill over a KV
  // cache).
  int causal_shift;
  float scale_log2;   // softmax scale * log2(e)
  int* tile_counter;  // dynamic persistence: one int, 0 at launch
  int wave_size;      // CTAs resident at once (what grid-mode sawtooth flips on)
  TensorStrides q, k, v, o;
};
// The host compiler and NVRTC must lay the block out alike (natural alignment, 8-byte pointers
// and long longs): asserted on both sides.
static_assert(sizeof(TensorStrides) == 24 && sizeof(AttentionArgs) == 144,
              "the launch-argument block has one layout on host and device");

// Element offset of row 0 of (batch, head) in the log-sum-exp, [batch, heads, seq_q] fp32
// contiguous (what the forward writes when asked and the backward reads).
SWR_HOST_DEVICE long long lse_row0(const AttentionArgs& args, int batch, int head) {
  return (static_cast<long long>(batch) * args.heads + head) * args.seq_q;
}

// The K/V head query head `head` reads: consecutive query heads share one K/V head.
SWR_HOST_DEVICE int kv_head_of(int head, int heads, int kv_heads) {
  return head / (heads / kv_heads);
}

}  // namespace attention
}  // namespace swr
