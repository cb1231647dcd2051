// The correctness check for shapes too large for the CPU reference: a GPU kernel computes the
// exact attention output (fp32 scores, fp64 sums) of a sample of rows, compared with those rows of
// the variant's output by the CPU check's measure; and every element of the output is checked to
// be finite (the output is poisoned with NaN before the run, so an unwritten element counts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "runtime/attention_launcher.hpp"
#include "swr/attention_problem.hpp"
#include "tuner/reference_attention.hpp"

namespace swr {

class HelperKernelModule;

// Query rows to check, as flat indices (batch * heads + head) * seq_q + row, sorted, distinct.
// Up to `rows_per_head` per (batch, head): always the first and the last row, rows on both sides
// of 64-row tile boundaries, the rest at random. When the total would pass `max_rows`, fewer rows
// per head and then a subset of heads (the first and the last always) are taken.
std::vector<std::int64_t> sample_reference_rows(const AttentionProblem& problem, std::uint64_t seed,
                                                int rows_per_head = 64, int max_rows = 4096);

class AttentionReferenceKernel {
 public:
  // Loads the reference, gather and finiteness kernels (compiled once per process) into the
  // current context.
  explicit AttentionReferenceKernel(const DeviceContext& context);
  ~AttentionReferenceKernel();
  AttentionReferenceKernel(const AttentionReferenceKernel&) = delete;
  AttentionReferenceKernel& operator=(const AttentionReferenceKernel&) = delete;

  // The exact output rows, row-major [rows.size(), head_dim], from q, k, v of `buffers`.
  // Synchronises the stream. Head dims: multiples of 8 up to 256.
  std::vector<double> reference_rows(const AttentionProblem& problem,
                                     const AttentionBuffers& buffers,
                                     const std::vector<std::int64_t>& rows, CUstream stream) const;
  // Those rows of the 16-bit output `buffers.o`. Synchronises the stream.
  std::vector<std::uint16_t> gather_rows(const AttentionProblem& problem,
                                         const AttentionBuffers& buffers,
                                         const std::vector<std::int64_t>& rows,
                                         CUstream stream) const;
  // 16-bit values (f16 or bf16) at `data` whose exponent is all ones: NaN or infinity.
  // Synchronises the stream.
  std::int64_t count_non_finite(CUdeviceptr data, std::size_t count, DataType type,
                                CUstream stream) const;

  // The whole check of a variant's output: non_finite over every element of O, relative_error
  // (||out - ref|| / ||ref||, as compare_with_reference) over the rows sampled with `seed`.
  OutputComparison check_output(const AttentionProblem& problem, const AttentionBuffers& buffers,
                                std::uint64_t seed, CUstream stream) const;

 private:
  const CudaDriver& driver_;
  std::unique_ptr<HelperKernelModule> module_;
  CUfunction reference_ = nullptr;
  CUfunction gather_ = nullptr;
  CUfunction count_non_finite_ = nullptr;
  unsigned count_grid_ = 0;
};

// The CUDA source of the reference, gather and finiteness kernels.
const char* attention_reference_kernel_source();

}  // namespace swr
