// What is checked before a tuned kernel is loaded or launched, so that a call that cannot run is
// refused with a reason instead of faulting on the device.
#pragma once

#include <string>

#include "swr/attention.hpp"
#include "swr/gemm.hpp"

namespace swr {

// Why `kernel` cannot run `problem` (its head dim, dtype or causal mode is compiled in and
// differs), or empty when it can.
std::string variant_mismatch(const TunedKernel& kernel, const AttentionProblem& problem);
// The same for a GEMM, whose dtype is compiled in (m, n and k are launch arguments).
std::string variant_mismatch(const TunedGemmKernel& kernel, const GemmProblem& problem);

// Why the tensors cannot be used (a null Q, K, V or O; a null A, B or C), or empty.
std::string tensor_mismatch(const AttentionTensors& tensors);
std::string tensor_mismatch(const GemmTensors& tensors);

// NVRTC allowed by the options and not turned off by SWR_RUNTIME_NVRTC=0 (or off, false, no).
bool nvrtc_allowed(const RuntimeOptions& options);

}  // namespace swr
