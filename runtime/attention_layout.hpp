// How an attention launch's tensors lie in memory, and the launch-argument block both instruction
// paths take (templates/attention/attention_args.cuh): the caller's element strides checked and
// resolved (the defaults made contiguous), what a kernel cannot read refused before launching, and
// the one host function that fills the block.
#pragma once

#include <string>

#include "driver/cuda_driver.hpp"
#include "swr/attention.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "templates/attention/attention_args.cuh"

namespace swr {

// Element strides of Q, K, V and O as the kernels index them ([batch, head, row], D stride 1).
struct AttentionLayout {
  attention::TensorStrides q, k, v, o;
};

// Contiguous [B, H, S, D] strides of a tensor of `heads` heads and `seq` rows.
attention::TensorStrides contiguous_strides(const AttentionProblem& problem, int heads, int seq);

// One tensor's strides given (all 0: contiguous [B, heads, seq, D]), checked as below; `tensor`
// names it in the error.
attention::TensorStrides resolve_tensor_strides(const char* tensor, const ElementStrides& given,
                                                const AttentionProblem& problem, int heads,
                                                int seq);

// Why a kernel's accesses of 2 * `elements` bytes cannot reach `tensor`'s rows (a stride of a
// dimension longer than 1 that is not a multiple of `elements`), or empty; likewise a pointer not
// `bytes`-aligned. `accesses` names them in the message ("16-byte copies").
std::string unaligned_stride(const char* tensor, const attention::TensorStrides& strides, int batch,
                             int heads, int seq, int elements, const char* accesses);
std::string unaligned_pointer(const char* tensor, CUdeviceptr pointer, int bytes,
                              const char* accesses);

// The strides given (all 0: contiguous), checked: a D stride other than 1, a negative stride, or
// rows of different (batch, head, row) that overlap are a UsageError naming the tensor and value.
AttentionLayout resolve_attention_layout(const AttentionProblem& problem,
                                         const ElementStrides& q_strides,
                                         const ElementStrides& k_strides,
                                         const ElementStrides& v_strides,
                                         const ElementStrides& o_strides);
bool is_contiguous(const AttentionProblem& problem, const AttentionLayout& layout);

// The block both kernel entries take by value: the problem's sizes and causal shift, the softmax
// scale 1/sqrt(D) as scale * log2(e), the layout, the dynamic-persistence counter and the wave.
attention::AttentionArgs attention_launch_args(const AttentionProblem& problem,
                                               const AttentionLayout& layout,
                                               CUdeviceptr tile_counter, int wave_size);

}  // namespace swr
