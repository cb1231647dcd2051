// The attention backward's check for shapes too large for the CPU reference: GPU kernels compute,
// from Q, K, V and dO, every query row's exact forward (fp32 scores, fp64 sums) -- its output O,
// which the variant takes as its input, its log-sum-exp L and delta = rowsum(dO o O) -- and then
// the exact gradients of a sample of rows: dQ of query rows, dK and dV of K/V rows (a GQA K/V row
// summed over its group's query heads). The variant's rows are compared with those by the CPU
// check's measure, and every element of its three outputs is checked to be finite.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "swr/attention_problem.hpp"

namespace swr {

class HelperKernelModule;

// Contiguous [B, H, S, D] device tensors of the problem's dtype, and the fp32 lists.
struct BackwardReferenceBuffers {
  CUdeviceptr q = 0, k = 0, v = 0, d_o = 0;  // inputs
  CUdeviceptr o = 0;      // written: O rounded to the dtype (the variant's input)
  CUdeviceptr lse = 0;    // written: [B, H, S_q] fp32, natural log (+inf: a row sees no key)
  CUdeviceptr delta = 0;  // written: [B, H, S_q] fp32, from the exact O
};

class BackwardReferenceKernel {
 public:
  // Loads the kernels (compiled once per process) into the current context.
  explicit BackwardReferenceKernel(const DeviceContext& context);
  ~BackwardReferenceKernel();
  BackwardReferenceKernel(const BackwardReferenceKernel&) = delete;
  BackwardReferenceKernel& operator=(const BackwardReferenceKernel&) = delete;

  // O, L and delta of every query row. Enqueued on `stream`. Head dims: multiples of 8 up to 256.
  void forward(const AttentionProblem& problem, const BackwardReferenceBuffers& buffers,
               CUstream stream) const;
  // The exact dQ of `q_rows` (flat (batch * heads + head) * seq_q + row), row-major
  // [q_rows.size(), D]; after forward(). Synchronises the stream.
  std::vector<double> dq_rows(const AttentionProblem& problem,
                              const BackwardReferenceBuffers& buffers,
                              const std::vector<std::int64_t>& q_rows, CUstream stream) const;
  // The exact dK and dV of `kv_rows` (flat (batch * kv_heads + kv_head) * seq_kv + row), each
  // [kv_rows.size(), D]; after forward(). Synchronises the stream.
  void dkv_rows(const AttentionProblem& problem, const BackwardReferenceBuffers& buffers,
                const std::vector<std::int64_t>& kv_rows, CUstream stream, std::vector<double>& dk,
                std::vector<double>& dv) const;

 private:
  const CudaDriver& driver_;
  std::unique_ptr<HelperKernelModule> module_;
  CUfunction forward_ = nullptr;
  CUfunction dq_ = nullptr;
  CUfunction dkv_ = nullptr;
};

}  // namespace swr
