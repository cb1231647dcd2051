// The GEMM swizzle heatmap (the block-swizzle paper's Figure 2): matrix size against swizzle
// stride, each cell the TFLOP/s of the fastest variant measured with that stride (any tile, any
// swizzle axis), the best stride of each size marked. GEMM rows are read through the generic
// tables: a problem of family "gemm" with {"m", "n", "k", "dtype"}, a config with
// "swizzle_stride" (0: plain row-major order). One heatmap per dtype.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/gpu_results.hpp"

namespace swr::report {

struct GemmSize {
  long long m = 0, n = 0, k = 0;
  std::string label() const;  // "4096³" when square, else "MxNxK"
};

struct GemmHeatmap {
  std::string dtype;
  std::string stem;                // "gemm_swizzle_f16"
  std::vector<GemmSize> sizes;     // rows, by M*N*K
  std::vector<long long> strides;  // columns, ascending
  // tflops[row][column]; missing where that stride was not measured at that size.
  std::vector<std::vector<std::optional<double>>> tflops;
  std::vector<std::optional<std::size_t>> best_column;  // per row
  // Per row: cuBLAS on the same inputs, as the tuner keeps it in each measurement's method
  // ("cublas_median_ms"); missing when it was not measured.
  std::vector<std::optional<double>> cublas_tflops;
};

std::vector<GemmHeatmap> gemm_heatmaps(const GpuResults& results);

}  // namespace swr::report
