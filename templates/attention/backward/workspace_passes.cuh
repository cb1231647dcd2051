// The passes around the backward's main kernel, each a grid over query rows (backward_args.cuh
// says what the workspace holds):
//  preprocess:  per row of the padded lists, delta = rowsum(dO o O) in fp32 and L * log2(e)
//               (padding rows: 0 and +inf, so that their P is 0), the row's dQ accumulator
//               zeroed (padding rows too: a tile's block is added whole by some kernels), and for
//               the first row of each Q tile its deterministic-mode semaphore.
//  postprocess: dQ = scale * accumulator in the input dtype, at dQ's strides, read through the
//               main kernel's accumulator layout (dq_accumulator_layout.cuh).
// A row is kRowThreads lanes of one warp (a power of two), the first HeadDim / 8 of which take 8
// columns each (16-byte loads of O and dO), reduced by shuffles; a CTA of kPassThreads threads
// takes kPassThreads / kRowThreads rows.
#pragma once

#include "attention/attention_args.cuh"
#include "attention/backward/backward_args.cuh"
#include "attention/backward/dq_accumulator_layout.cuh"
#include "attention/row_statistics.cuh"
#include "common/element.cuh"

namespace swr {
namespace attention {

template <int HeadDim>
struct PassRows {
  static constexpr int kColumnThreads = HeadDim / 8;
  static constexpr int kRowThreads = pass_row_threads(HeadDim);
  static constexpr int kRowsPerBlock = kPassThreads / kRowThreads;
  static_assert(HeadDim % 8 == 0 && kColumnThreads <= 32, "8 columns a thread, a row in a warp");
};

template <Element E>
__device__ __forceinline__ float element_to_float(unsigned short bits) {
  if constexpr (E == Element::f16) {
    float value;
    asm("{ .reg .f16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(value) : "h"(bits));
    return value;
  } else {
    return __uint_as_float(static_cast<unsigned>(bits) << 16);
  }
}

// Grid: ceil(batch * heads * seq_q_padded / kRowsPerBlock) CTAs of kPassThreads threads. lse:
// [batch, heads, seq_q] fp32, contiguous (what the forward wrote).
template <int HeadDim, Element E, int BlockM>
__device__ void backward_preprocess(const void* o, const void* d_o, const float* lse,
                                    const BackwardArgs& args) {
  using Rows = PassRows<HeadDim>;
  const int row_thread = threadIdx.x % Rows::kRowThreads;
  const long long row_index =
      static_cast<long long>(blockIdx.x) * Rows::kRowsPerBlock + threadIdx.x / Rows::kRowThreads;
  const long long heads_rows = static_cast<long long>(args.batch) * args.heads;
  const bool inside = row_index < heads_rows * args.seq_q_padded;
  const int head_index = static_cast<int>(row_index / args.seq_q_padded);  // batch * heads + h
  const int row =
      static_cast<int>(row_index - static_cast<long long>(head_index) * args.seq_q_padded);
  const int batch = head_index / args.heads;
  const int head = head_index - batch * args.heads;
  const bool real = inside && row < args.seq_q;

  float sum = 0.f;
  if (inside && row_thread < Rows::kColumnThreads) {
    float4* accumulator = reinterpret_cast<float4*>(
        args.workspace.dq_accum + dq_accum_offset(args, batch, head, row, HeadDim) +
        8 * row_thread);
    accumulator[0] = make_float4(0.f, 0.f, 0.f, 0.f);
    accumulator[1] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  if (real && row_thread < Rows::kColumnThreads) {
    const uint4 out =
        *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(o) +
                                        row_offset(args.o, batch, head, row) + 8 * row_thread);
    const uint4 grad =
        *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(d_o) +
                                        row_offset(args.d_o, batch, head, row) + 8 * row_thread);
    const unsigned a[4] = {out.x, out.y, out.z, out.w};
    const unsigned b[4] = {grad.x, grad.y, grad.z, grad.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      sum += element_to_float<E>(a[i] & 0xffffu) * element_to_float<E>(b[i] & 0xffffu);
      sum += element_to_float<E>(a[i] >> 16) * element_to_float<E>(b[i] >> 16);
    }
  }
#pragma unroll
  for (int offset = Rows::kRowThreads / 2; offset > 0; offset /= 2) {
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  }
  if (inside && row_thread == 0) {
    const long long list = static_cast<long long>(head_index) * args.seq_q_padded + row;
    args.workspace.delta[list] = real ? sum : 0.f;
    const float log2e = 1.4426950408889634f;
    const float l = real ? lse[static_cast<long long>(head_index) * args.seq_q + row] : 0.f;
    // A row that saw no key has L = +inf (its output is 0); it stays +inf.
    args.workspace.lse_log2[list] =
        real ? (l == positive_infinity() ? l : l * log2e) : positive_infinity();
    if (args.workspace.semaphores != nullptr && row % BlockM == 0) {
      args.workspace.semaphores[static_cast<long long>(head_index) * (args.seq_q_padded / BlockM) +
                                row / BlockM] = 0;
    }
  }
}

// Grid: ceil(batch * heads * seq_q / kRowsPerBlock) CTAs of kPassThreads threads. Layout: the
// main kernel's (DqRowLayout or DqFragmentLayout), over Q tiles of BlockM rows.
template <int HeadDim, Element E, int BlockM, class Layout>
__device__ void backward_postprocess(void* dq, const BackwardArgs& args) {
  using Rows = PassRows<HeadDim>;
  const int row_thread = threadIdx.x % Rows::kRowThreads;
  const long long row_index =
      static_cast<long long>(blockIdx.x) * Rows::kRowsPerBlock + threadIdx.x / Rows::kRowThreads;
  if (row_thread >= Rows::kColumnThreads ||
      row_index >= static_cast<long long>(args.batch) * args.heads * args.seq_q) {
    return;
  }
  const int head_index = static_cast<int>(row_index / args.seq_q);
  const int row = static_cast<int>(row_index - static_cast<long long>(head_index) * args.seq_q);
  const int batch = head_index / args.heads;
  const int head = head_index - batch * args.heads;
  const int row_in_tile = row % BlockM;
  const float* tile =
      args.workspace.dq_accum + dq_accum_offset(args, batch, head, row - row_in_tile, HeadDim);
  // Columns 8 * row_thread .. + 7, as pairs: one 8-byte load where the layout keeps a pair of
  // columns together, else (dQ^T's fragments) two loads.
  const float s = args.scale;
  unsigned packed[4];
#pragma unroll
  for (int pair = 0; pair < 4; ++pair) {
    const int column = 8 * row_thread + 2 * pair;
    float2 value;
    if constexpr (Layout::kColumnPairs) {
      value = *reinterpret_cast<const float2*>(tile + Layout::offset(row_in_tile, column));
    } else {
      value = make_float2(tile[Layout::offset(row_in_tile, column)],
                          tile[Layout::offset(row_in_tile, column + 1)]);
    }
    packed[pair] = pack_pair<E>(value.x * s, value.y * s);
  }
  *reinterpret_cast<uint4*>(static_cast<unsigned short*>(dq) +
                            row_offset(args.dq, batch, head, row) + 8 * row_thread) =
      make_uint4(packed[0], packed[1], packed[2], packed[3]);
}

}  // namespace attention
}  // namespace swr
