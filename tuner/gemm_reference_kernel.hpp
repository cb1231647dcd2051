// The GEMM reference on the GPU, for sizes a CPU reference cannot reach: C = A · B in fp32 from
// the same 16-bit inputs (a plain shared-memory tiled kernel, independent of the tuned template
// and of cuBLAS), and the comparison of a 16-bit result with it, reduced on the device.
#pragma once

#include <memory>

#include "driver/device_context.hpp"
#include "runtime/gemm_launcher.hpp"
#include "swr/gemm_problem.hpp"
#include "tuner/reference_attention.hpp"  // OutputComparison

namespace swr {

class HelperKernelModule;

class GemmReferenceKernel {
 public:
  // Compiles (once per process) and loads the kernels into the current context.
  explicit GemmReferenceKernel(const DeviceContext& context);
  ~GemmReferenceKernel();
  GemmReferenceKernel(const GemmReferenceKernel&) = delete;
  GemmReferenceKernel& operator=(const GemmReferenceKernel&) = delete;

  // Enqueues reference[m x n] (fp32, row-major) = A · B from buffers.a and buffers.b.
  void compute(const GemmProblem& problem, const GemmBuffers& buffers, CUdeviceptr reference,
               CUstream stream) const;

  // ||C - reference|| / ||reference|| and C's NaN/inf elements, for the 16-bit C at `output`;
  // synchronizes the stream.
  OutputComparison compare(const GemmProblem& problem, CUdeviceptr output, CUdeviceptr reference,
                           CUstream stream) const;

 private:
  std::unique_ptr<HelperKernelModule> module_;
  CUfunction reference_ = nullptr;
  CUfunction compare_ = nullptr;
  CUdeviceptr sums_ = 0;  // two doubles (squared difference, squared reference), one counter
};

// The CUDA source of the kernels (tests compile it for several targets).
const char* gemm_reference_kernel_source();

}  // namespace swr
