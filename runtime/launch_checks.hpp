// What is checked before a tuned kernel is loaded or launched, so that a call that cannot run is
// refused with a reason instead of faulting on the device.
#pragma once

#include <string>

#include "swr/attention.hpp"

namespace swr {

// Why `kernel` cannot run `problem` (its head dim, dtype or causal mode is compiled in and
// differs), or empty when it can.
std::string variant_mismatch(const TunedKernel& kernel, const AttentionProblem& problem);

// Why the tensors cannot be used (a null Q, K, V or O), or empty.
std::string tensor_mismatch(const AttentionTensors& tensors);

// NVRTC allowed by the options and not turned off by SWR_RUNTIME_NVRTC=0 (or off, false, no).
bool nvrtc_allowed(const AttentionOptions& options);

}  // namespace swr
