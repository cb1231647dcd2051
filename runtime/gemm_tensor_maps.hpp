// The three TMA tensor maps a wgmma GEMM variant reads A and B and writes C through
// (templates/gemm/sm90/gemm_traits_sm90.cuh): what each describes for a problem and config, and
// a per-module cache that encodes them once per shape and only retargets them when the pointers
// change. A pointer or row stride TMA cannot describe is refused here, before any launch.
#pragma once

#include <array>

#include "driver/tensor_map.hpp"
#include "driver/tensor_map_set.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

struct GemmOperandPointers {
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  CUdeviceptr c = 0;
  bool operator==(const GemmOperandPointers&) const = default;
};

// In the kernel's argument order (map_a, map_b, map_c). A [m][k] box {64, block_m / cluster_n};
// B [k][n] box {64, 64} (block_n / 64 per stage); C [m][n] box {64, rows per consumer warpgroup}.
// A transposed config (C^T = B^T · A^T) reads B first, box {64, 64}, then A, box {64, block_n /
// cluster_m}, and stores C in boxes {64, block_n}. Row-major, 16-bit, 128-byte swizzle.
std::array<TensorMapDescription, 3> gemm_tensor_map_descriptions(const GemmProblem& problem,
                                                                 const GemmConfig& config);

// Empty when TMA can describe every operand at these pointers; else tensor_map_problem()'s line
// ("A: base address 0x... is not 16-byte aligned", "... row stride ... not a multiple of 16").
std::string gemm_tensor_map_problem(const GemmProblem& problem, const GemmConfig& config,
                                    const GemmOperandPointers& pointers);

class GemmTensorMapCache {
 public:
  // The maps for `problem` at `pointers`: encoded on the first call and on a new shape, retargeted
  // (cuTensorMapReplaceAddress) when only the pointers moved (driver/tensor_map_set.hpp). Throws
  // std::invalid_argument with gemm_tensor_map_problem()'s line when TMA cannot describe them.
  std::array<TensorMap, 3> maps(const CudaDriver& driver, const GemmProblem& problem,
                                const GemmConfig& config, const GemmOperandPointers& pointers);

 private:
  TensorMapSet<3> maps_;
};

}  // namespace swr
