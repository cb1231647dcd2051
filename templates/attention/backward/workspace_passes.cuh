// The passes around the backward's main kernel, each a grid over query rows (backward_args.cuh
// says what the workspace holds):
//  preprocess:  per row of the padded lists, delta = rowsum(dO o O) in fp32 and L * log2(e)
//               (padding rows: 0 and +inf, so that their P is 0), the row's dQ accumulator
//               zeroed (padding rows too: a tile's block is added whole by some kernels), and for
//               the first row of each Q tile its deterministic-mode semaphore.
//  postprocess: dQ = scale * accumulator in the input dtype, at dQ's strides, read through the
//               main kernel's accumulator layout (dq_accumulator_layout.cuh): row by row, or a
//               part of a Q tile a CTA, staged in shared memory.
// A row is kRowThreads lanes of one warp (a power of two), the first HeadDim / 8 of which take 8
// columns each (16-byte loads of O and dO), reduced by shuffles; a CTA of kPassThreads threads
// takes kPassThreads / kRowThreads rows.
#pragma once

#include "attention/attention_args.cuh"
#include "attention/backward/backward_args.cuh"
#include "attention/backward/dq_accumulator_layout.cuh"
#include "attention/row_statistics.cuh"
#include "common/element.cuh"
#include "common/ptx.cuh"

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

  // Every load is issued before the zeroing stores and the sum, L's too (read after the sum it was
  // a second round trip); on an H100 the pass took the same 182 us either way (passes-2026-11-27).
  const bool columns = row_thread < Rows::kColumnThreads;
  uint4 out = make_uint4(0u, 0u, 0u, 0u), grad = out;
  if (real && columns) {
    out = *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(o) +
                                          row_offset(args.o, batch, head, row) + 8 * row_thread);
    grad = *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(d_o) +
                                           row_offset(args.d_o, batch, head, row) + 8 * row_thread);
  }
  const float l =
      real && row_thread == 0 ? lse[static_cast<long long>(head_index) * args.seq_q + row] : 0.f;
  if (inside && columns) {
    float4* accumulator = reinterpret_cast<float4*>(
        args.workspace.dq_accum + dq_accum_offset(args, batch, head, row, HeadDim) +
        8 * row_thread);
    accumulator[0] = make_float4(0.f, 0.f, 0.f, 0.f);
    accumulator[1] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  const long long threads = static_cast<long long>(gridDim.x) * kPassThreads;
  for (long long word = static_cast<long long>(blockIdx.x) * kPassThreads + threadIdx.x;
       word < args.split_words; word += threads) {
    reinterpret_cast<float4*>(args.workspace.split_arrivals)[word] =
        make_float4(0.f, 0.f, 0.f, 0.f);
  }
  float sum = 0.f;
  const unsigned a[4] = {out.x, out.y, out.z, out.w};
  const unsigned b[4] = {grad.x, grad.y, grad.z, grad.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    sum += element_to_float<E>(a[i] & 0xffffu) * element_to_float<E>(b[i] & 0xffffu);
    sum += element_to_float<E>(a[i] >> 16) * element_to_float<E>(b[i] >> 16);
  }
#pragma unroll
  for (int offset = Rows::kRowThreads / 2; offset > 0; offset /= 2) {
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  }
  if (inside && row_thread == 0) {
    const long long list = static_cast<long long>(head_index) * args.seq_q_padded + row;
    args.workspace.delta[list] = real ? sum : 0.f;
    const float log2e = 1.4426950408889634f;
    // A row that saw no key has L = +inf (its output is 0); it stays +inf.
    args.workspace.lse_log2[list] =
        real ? (l == positive_infinity() ? l : l * log2e) : positive_infinity();
    if (args.workspace.semaphores != nullptr && row % BlockM == 0) {
      args.workspace.semaphores[static_cast<long long>(head_index) * (args.seq_q_padded / BlockM) +
                                row / BlockM] = 0;
    }
  }
}

// A row layout's postprocess (DqRowLayout: each row's floats in order). Grid: ceil(batch * heads *
// seq_q / kRowsPerBlock) CTAs of kPassThreads threads.
template <int HeadDim, Element E, int BlockM, class Layout>
__device__ void postprocess_rows(void* dq, const BackwardArgs& args) {
  static_assert(Layout::kColumnPairs, "read a pair of columns at once");
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
  // Columns 8 * row_thread .. + 7, as pairs.
  const float s = args.scale;
  unsigned packed[4];
#pragma unroll
  for (int pair = 0; pair < 4; ++pair) {
    const float2 value = *reinterpret_cast<const float2*>(
        tile + Layout::offset(row_in_tile, 8 * row_thread + 2 * pair));
    packed[pair] = pack_pair<E>(value.x * s, value.y * s);
  }
  store_sixteen(
      static_cast<unsigned short*>(dq) + row_offset(args.dq, batch, head, row) + 8 * row_thread,
      packed[0], packed[1], packed[2], packed[3]);
}

// A fragment layout's postprocess (DqFragmentLayout), a part of a Q tile a CTA: the part's
// floats read in order (16 bytes a thread, coalesced) into shared memory by row, then each row
// written 16 bytes a thread. Reading the fragments in place, row by row, took twice the copy's
// time on the H200 (passes-757ffa3: 201 us for 402 MB). Grid: batch * heads * q_tiles * kParts
// CTAs of kPassThreads threads (backward_postprocess_blocks).
template <int HeadDim, Element E, int BlockM, class Layout>
__device__ void postprocess_parts(void* dq, const BackwardArgs& args) {
  constexpr int kRows = Layout::kPartRows;
  constexpr int kColumns = Layout::kColumns;
  // Rows 16-byte aligned for the reads, and 4 banks apart.
  constexpr int kStride = kColumns + 4;
  constexpr int kVectors = Layout::kWarpgroupFloats / (4 * kPassThreads);
  static_assert(kVectors * 4 * kPassThreads == Layout::kWarpgroupFloats && kColumns % 8 == 0,
                "a part is whole float4s a thread and whole 8-column groups a row");
  __shared__ __align__(16) float staged[kRows * kStride];
  const int part = static_cast<int>(blockIdx.x % Layout::kParts);
  const int tile_index =
      static_cast<int>(blockIdx.x / Layout::kParts);  // (b * heads + h) * tiles + t
  const int head_index = tile_index / args.q_tiles;
  const int q_tile = tile_index - head_index * args.q_tiles;
  const int batch = head_index / args.heads;
  const int head = head_index - batch * args.heads;
  const float4* source = reinterpret_cast<const float4*>(
      args.workspace.dq_accum + dq_accum_offset(args, batch, head, q_tile * BlockM, HeadDim) +
      part * Layout::kWarpgroupFloats);

  float4 values[kVectors];
#pragma unroll
  for (int k = 0; k < kVectors; ++k)
    values[k] = load_sixteen_once(source + k * kPassThreads + threadIdx.x);
  // Each float4 by its first float's place (the others a fixed step from it: one add each).
  constexpr int kPairStep = Layout::kPairStep.row * kStride + Layout::kPairStep.column;
  constexpr int kHalfStep = Layout::kHalfStep.row * kStride + Layout::kHalfStep.column;
#pragma unroll
  for (int k = 0; k < kVectors; ++k) {
    const DqPosition first = Layout::part_position(4 * (k * kPassThreads + threadIdx.x));
    float* const at = staged + first.row * kStride + first.column;
    if constexpr (kPairStep == 1) {
      *reinterpret_cast<float2*>(at) = make_float2(values[k].x, values[k].y);
      *reinterpret_cast<float2*>(at + kHalfStep) = make_float2(values[k].z, values[k].w);
    } else {
      at[0] = values[k].x;
      at[kPairStep] = values[k].y;
      at[kHalfStep] = values[k].z;
      at[kHalfStep + kPairStep] = values[k].w;
    }
  }
  __syncthreads();

  const float s = args.scale;
  const int row0 = q_tile * BlockM + (Layout::kByRows ? part * kRows : 0);
  const int column0 = Layout::kByRows ? 0 : part * kColumns;
  unsigned short* const dq_head =
      static_cast<unsigned short*>(dq) + row_offset(args.dq, batch, head, 0);
#pragma unroll
  for (int unit = threadIdx.x; unit < kRows * kColumns / 8; unit += kPassThreads) {
    const int row = unit / (kColumns / 8);
    const int column = 8 * (unit % (kColumns / 8));
    if (row0 + row >= args.seq_q) break;  // a thread's later units lie in later rows
    const float4* in = reinterpret_cast<const float4*>(staged + row * kStride + column);
    const float4 a = in[0];
    const float4 b = in[1];
    store_sixteen(dq_head + static_cast<long long>(row0 + row) * args.dq.seq + column0 + column,
                  pack_pair<E>(a.x * s, a.y * s), pack_pair<E>(a.z * s, a.w * s),
                  pack_pair<E>(b.x * s, b.y * s), pack_pair<E>(b.z * s, b.w * s));
  }
}

// dQ = scale * accumulator in the input dtype at dQ's strides, read through the main kernel's
// accumulator layout (DqRowLayout or DqFragmentLayout), over Q tiles of BlockM rows.
template <int HeadDim, Element E, int BlockM, class Layout>
__device__ void backward_postprocess(void* dq, const BackwardArgs& args) {
  if constexpr (Layout::kParts == 0) {
    postprocess_rows<HeadDim, E, BlockM, Layout>(dq, args);
  } else {
    postprocess_parts<HeadDim, E, BlockM, Layout>(dq, args);
  }
}

}  // namespace attention
}  // namespace swr
