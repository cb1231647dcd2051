// The GEMM swizzle heatmap: its cells from the measurements, and its gnuplot files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/gnuplot.hpp"
#include "report/gpu_results.hpp"

namespace swr::report {

// The GEMM swizzle heatmap (the block-swizzle paper's Figure 2): matrix size against swizzle
// stride, each cell the TFLOP/s of the fastest variant measured with that stride (any tile, any
// swizzle axis), the best stride of each size marked. GEMM rows are read through the generic
// tables: a problem of family "gemm" with {"m", "n", "k", "dtype"}, a config with
// "swizzle_stride" (0: plain row-major order). One heatmap per dtype.

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

// The gnuplot files of one GEMM swizzle heatmap (gemm_heatmap.hpp): coloured cells with their
// TFLOP/s written in, each size's best stride framed in blue, unmeasured cells left blank.

ChartFiles write_gemm_heatmap_chart(const GemmHeatmap& heatmap, const std::string& gpu_label,
                                    const std::filesystem::path& directory);

}  // namespace swr::report
