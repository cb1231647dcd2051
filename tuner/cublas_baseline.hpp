// cuBLAS as the GEMM baseline and reference, loaded at run time like the driver (dlopen of
// libcublas.so.13, else .12): the binary starts without it, and the tuner then says "cuBLAS not
// found" and goes on. Row-major C = A · B is computed as the column-major C^T = B^T · A^T, which
// needs no transposition: a row-major [k x n] B is a column-major [n x k] B^T with ld n.
#pragma once

#include <memory>
#include <string>

#include "driver/cuda_driver.hpp"
#include "runtime/gemm_launcher.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

class CublasBaseline {
 public:
  // Loads cuBLAS and creates a handle in the current context; nullptr when the library or one of
  // its entry points is missing or the handle cannot be made, with `why` set.
  static std::unique_ptr<CublasBaseline> load(std::string& why);
  ~CublasBaseline();
  CublasBaseline(const CublasBaseline&) = delete;
  CublasBaseline& operator=(const CublasBaseline&) = delete;

  // "13.0.2 (libcublas.so.13)"
  const std::string& version() const { return version_; }

  // Enqueues C = A · B (fp32 accumulation, default algorithm) on `stream`; throws
  // std::runtime_error naming the cuBLAS status when the call fails.
  void multiply(const GemmProblem& problem, const GemmBuffers& buffers, CUstream stream) const;

 private:
  struct Library;
  explicit CublasBaseline(std::unique_ptr<Library> library);
  std::unique_ptr<Library> library_;
  std::string version_;
};

}  // namespace swr
