// Running the tuned GEMM kernel from a user's program: swr::Gemm picks the best variant for a shape
// from a TunedCatalog, obtains its cubin (the export's file, else the cubin cache, else NVRTC as a
// last resort), loads it once per CUDA context, and launches it on the caller's stream with the
// caller's device pointers: C = A · B, all row-major (a contiguous `a @ b` in PyTorch), fp16 or
// bf16, fp32 accumulation. The CUDA driver is loaded at run time, so programs built against this
// header link no CUDA library. CUDA handles cross it as opaque values (swr/runtime_options.hpp).
#pragma once

#include <memory>
#include <string>

#include "swr/export.h"
#include "swr/gemm_problem.hpp"
#include "swr/runtime_options.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

// Row-major matrices of the problem's dtype (2-byte elements) on the device of the context that
// runs them: A [m x k], B [k x n], C [m x n]. Rows of A and B start 16-byte aligned when the
// pointers do (n and k are multiples of 8), as the kernel's cp.async needs.
struct GemmTensors {
  DevicePointer a = 0;
  DevicePointer b = 0;
  DevicePointer c = 0;
};

// The name GEMM programs catch; every launcher raises the same KernelRefused.
using GemmRefused = KernelRefused;

// What run() launches for a shape on the current device.
struct GemmPlan {
  TunedGemmChoice choice;
  std::string cubin_origin;  // "export", "cubin cache" or "NVRTC"
  std::string arch;          // of the cubin
  std::string device;        // the device's name and compute capability
  int grid = 0;              // CTAs: one per output tile (grid), at most one wave (static)
  int block_threads = 0;
  int dynamic_shared_bytes = 0;
  int swizzle_axis = 0;   // the kernel's swizzle arguments: 0 bands of tile columns, 1 of rows
  int swizzle_group = 0;  // tiles per band; 0 = plain row-major order
};

// run() of one problem decided once, by Gemm::prepare: as PreparedAttention (swr/attention.hpp).
class SWR_API PreparedGemm {
 public:
  // As Gemm::run for the prepared problem; UsageError when the calling thread's current context
  // is not the one it was prepared in.
  void run(const GemmTensors& tensors, StreamHandle stream = nullptr) const;
  const TunedGemmChoice& choice() const;
  unsigned long long context_id() const;

 private:
  friend class Gemm;
  struct Decided;
  std::shared_ptr<const Decided> decided_;
};

class SWR_API Gemm {
 public:
  explicit Gemm(TunedCatalog catalog, RuntimeOptions options = {});
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // Enqueues C = A · B on `stream`, in the calling thread's current context (when the thread has
  // none: the primary context of device $SWR_DEVICE, else 0, made current). Returns once enqueued.
  // Thread-safe: any number of threads may call it at once. Throws UsageError for an invalid
  // problem (GemmProblem::validate) and GemmRefused for a call that cannot run.
  void run(const GemmProblem& problem, const GemmTensors& tensors,
           StreamHandle stream = nullptr) const;

  // Everything run() decides, loading the kernel if needed, without launching.
  GemmPlan plan(const GemmProblem& problem) const;

  // Everything run() decides, once, in the calling thread's current context (PreparedGemm).
  PreparedGemm prepare(const GemmProblem& problem) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace swr
