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

// The entry of every rendered wgmma kernel (templates/gemm/sm90/), 384 threads. Its arguments:
//   (const __grid_constant__ TmaDescriptor map_a, map_b, map_c, void* c, int m, int n, int k,
//    int swizzle_axis, int swizzle_group, int* tile_counter)
// tile_counter: a zeroed int for dynamic persistence (unused otherwise).
inline constexpr const char* kGemmWgmmaEntryName = "swr_gemm_sm90";
inline constexpr const char* kGemmWgmmaArguments =
    "map_a, map_b, map_c, c, m, n, k, swizzle_axis, swizzle_group, tile_counter";

// The entry a config's binary defines.
const char* gemm_entry_name(const GemmConfig& config);

// The compile-time part of the problem (dtype) goes into the source; m, n, k stay run-time.
KernelSource render_gemm_kernel(const GemmProblem& problem, const GemmConfig& config);

// "m128n256k32w2x4s4-grid_f16": what the binary depends on (config without swizzle, dtype).
std::string gemm_binary_name(const GemmProblem& problem, const GemmConfig& config);

}  // namespace swr
