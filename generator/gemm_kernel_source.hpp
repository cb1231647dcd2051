// Rendering a GemmConfig into CUDA source for NVRTC. The swizzle is a launch argument, so configs
// that differ only in their swizzle render the same text (and share one cached cubin).
#pragma once

#include <string>

#include "generator/kernel_source.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

// The one entry point every rendered GEMM kernel defines (extern "C"). Its arguments:
//   (const void* a, const void* b, void* c, int m, int n, int k, int swizzle_axis,
//    int swizzle_group)
inline constexpr const char* kGemmEntryName = "swr_gemm";

// The compile-time part of the problem (dtype) goes into the source; m, n, k stay run-time.
KernelSource render_gemm_kernel(const GemmProblem& problem, const GemmConfig& config);

// "m128n256k32w2x4s4-grid_f16": what the binary depends on (config without swizzle, dtype).
std::string gemm_binary_name(const GemmProblem& problem, const GemmConfig& config);

}  // namespace swr
