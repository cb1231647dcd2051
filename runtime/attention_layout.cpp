#include "runtime/attention_layout.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "swr/usage_error.hpp"

namespace swr {
namespace {

// One dimension of a [B, H, S, D] view: its extent and element stride.
struct Dimension {
  const char* name;
  std::int64_t extent;
  std::int64_t stride;
};

std::string stride_text(const char* tensor, const ElementStrides& strides) {
  return std::string(tensor) + " strides {" + std::to_string(strides.batch) + ", " +
         std::to_string(strides.head) + ", " + std::to_string(strides.seq) + ", " +
         std::to_string(strides.dim) + "}";
}

// Rows of distinct (batch, head, row) never share an element: ordered by stride, each dimension
// longer than 1 must step past everything the shorter-stride ones span (the row's D elements
// first). Sufficient, and what every dense or strided view of a PyTorch tensor satisfies.
attention::TensorStrides checked_strides(const char* tensor, const ElementStrides& given, int batch,
                                         int heads, int seq, int head_dim) {
  if (given.dim != 1) {
    throw UsageError("bad " + stride_text(tensor, given) + ": the head_dim stride must be 1");
  }
  std::array<Dimension, 3> dims = {Dimension{"batch", batch, given.batch},
                                   Dimension{"head", heads, given.head},
                                   Dimension{"seq", seq, given.seq}};
  for (const Dimension& dim : dims) {
    if (dim.stride < 0) {
      throw UsageError("bad " + stride_text(tensor, given) + ": the " + dim.name +
                       " stride is negative (allowed: 0 or more)");
    }
  }
  std::sort(dims.begin(), dims.end(),
            [](const Dimension& a, const Dimension& b) { return a.stride < b.stride; });
  std::int64_t span = head_dim;  // elements one row covers
  for (const Dimension& dim : dims) {
    if (dim.extent <= 1) continue;
    if (dim.stride < span) {
      throw UsageError("bad " + stride_text(tensor, given) + ": the " + dim.name + " stride " +
                       std::to_string(dim.stride) + " overlaps rows that span " +
                       std::to_string(span) +
                       " elements (allowed: strides whose rows do not overlap)");
    }
    span = dim.stride * (dim.extent - 1) + span;
  }
  return {given.batch, given.head, given.seq};
}

bool same(const attention::TensorStrides& a, const attention::TensorStrides& b) {
  return a.batch == b.batch && a.head == b.head && a.seq == b.seq;
}

}  // namespace

// A stride of a dimension longer than 1 that is not a multiple of `elements` (what accesses of
// 2 * `elements` bytes need), or empty.
std::string unaligned_stride(const char* tensor, const attention::TensorStrides& strides, int batch,
                             int heads, int seq, int elements, const char* accesses) {
  const std::pair<const char*, std::pair<long long, int>> dims[] = {
      {"batch", {strides.batch, batch}},
      {"head", {strides.head, heads}},
      {"seq", {strides.seq, seq}}};
  for (const auto& [name, dim] : dims) {
    if (dim.second > 1 && dim.first % elements != 0) {
      return std::string(tensor) + "'s " + name + " stride " + std::to_string(dim.first) +
             " elements is not a multiple of " + std::to_string(elements) + " (" +
             std::to_string(2 * elements) + " bytes), which its " + accesses + " need";
    }
  }
  return {};
}

std::string unaligned_pointer(const char* tensor, CUdeviceptr pointer, int bytes,
                              const char* accesses) {
  if (pointer % bytes == 0) return {};
  return std::string(tensor) + " at " + std::to_string(pointer) + " is not " +
         std::to_string(bytes) + "-byte aligned, which the kernel's " + accesses + " need";
}

attention::TensorStrides resolve_tensor_strides(const char* tensor, const ElementStrides& given,
                                                const AttentionProblem& problem, int heads,
                                                int seq) {
  if (given.is_default()) return contiguous_strides(problem, heads, seq);
  return checked_strides(tensor, given, problem.batch, heads, seq, problem.head_dim);
}

attention::TensorStrides contiguous_strides(const AttentionProblem& problem, int heads, int seq) {
  const long long row = problem.head_dim;
  return {row * seq * heads, row * seq, row};
}

AttentionLayout resolve_attention_layout(const AttentionProblem& problem,
                                         const ElementStrides& q_strides,
                                         const ElementStrides& k_strides,
                                         const ElementStrides& v_strides,
                                         const ElementStrides& o_strides) {
  const int kv_heads = problem.kv_head_count();
  return {resolve_tensor_strides("q", q_strides, problem, problem.heads, problem.seq_q),
          resolve_tensor_strides("k", k_strides, problem, kv_heads, problem.seq_kv),
          resolve_tensor_strides("v", v_strides, problem, kv_heads, problem.seq_kv),
          resolve_tensor_strides("o", o_strides, problem, problem.heads, problem.seq_q)};
}

bool is_contiguous(const AttentionProblem& problem, const AttentionLayout& layout) {
  const int kv_heads = problem.kv_head_count();
  return same(layout.q, contiguous_strides(problem, problem.heads, problem.seq_q)) &&
         same(layout.o, contiguous_strides(problem, problem.heads, problem.seq_q)) &&
         same(layout.k, contiguous_strides(problem, kv_heads, problem.seq_kv)) &&
         same(layout.v, contiguous_strides(problem, kv_heads, problem.seq_kv));
}

attention::AttentionArgs attention_launch_args(const AttentionProblem& problem,
                                               const AttentionLayout& layout,
                                               CUdeviceptr tile_counter, int wave_size) {
  attention::AttentionArgs args{};
  args.batch = problem.batch;
  args.heads = problem.heads;
  args.kv_heads = problem.kv_head_count();
  args.seq_q = problem.seq_q;
  args.seq_kv = problem.seq_kv;
  args.causal_shift = problem.causal_shift();
  args.scale_log2 =
      static_cast<float>(std::numbers::log2e / std::sqrt(static_cast<double>(problem.head_dim)));
  args.tile_counter = reinterpret_cast<int*>(tile_counter);
  args.wave_size = wave_size;
  args.q = layout.q;
  args.k = layout.k;
  args.v = layout.v;
  args.o = layout.o;
  return args;
}

}  // namespace swr
