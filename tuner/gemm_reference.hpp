// GEMM on the CPU in double precision (the reference small shapes are checked against), and the
// comparison of a kernel's 16-bit output with a reference.
#pragma once

#include <cstdint>
#include <vector>

#include "swr/gemm_problem.hpp"
#include "tuner/reference_attention.hpp"  // OutputComparison, relative_error_tolerance

namespace swr {

// a [m x k], b [k x n] row-major 16-bit elements; the result is [m x n] in double. Runs on all
// hardware threads.
std::vector<double> reference_gemm(const GemmProblem& problem, const std::vector<std::uint16_t>& a,
                                   const std::vector<std::uint16_t>& b);

// ||out - ref|| / ||ref|| over all elements, and how many are NaN or inf (a poisoned element that
// was never written is NaN).
OutputComparison compare_gemm_output(DataType type, const std::vector<std::uint16_t>& output,
                                     const std::vector<double>& reference);

// The same against another 16-bit result (cuBLAS's), taken as the reference.
OutputComparison compare_gemm_output(DataType type, const std::vector<std::uint16_t>& output,
                                     const std::vector<std::uint16_t>& reference);

}  // namespace swr
