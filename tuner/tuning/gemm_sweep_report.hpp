// The tables of the swizzle sweep, as in the paper's Tables 2 and 3: per square size the best
// stride with its TFLOP/s and ratio to cuBLAS, and the sensitivity (max - min) / max of TFLOP/s
// over the strides; plus every (size, stride) cell.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "swr/gpu_profile.hpp"

namespace swr {

struct GemmSweepCell {
  int stride = 0;
  std::optional<double> median_ms;  // none: not measured or failed
  std::string tile_order;           // the order the stride gives on this size ("n-bands-8", ...)
};

struct GemmSweepRow {
  int size = 0;
  std::optional<double> cublas_ms;
  std::vector<GemmSweepCell> cells;
};

struct GemmSweepSummary {
  int size = 0;
  std::optional<int> best_stride;
  std::optional<double> best_tflops;
  std::optional<double> cublas_tflops;
  std::optional<double> ratio_to_cublas;
  std::optional<double> sensitivity;  // (max - min) / max over the measured strides
  int strides_measured = 0;
};

GemmSweepSummary summarize_sweep_row(const GemmSweepRow& row);

// Markdown: how it was measured, Table 2 and Table 3 forms, and the full grid in TFLOP/s.
std::string gemm_sweep_markdown(const std::vector<GemmSweepRow>& rows, const GpuProfile& gpu,
                                const std::string& variant, const std::string& dtype,
                                const std::string& command);
// size,stride,tile_order,median_ms,tflops,ratio_to_cublas (a cuBLAS row per size with stride -1).
std::string gemm_sweep_csv(const std::vector<GemmSweepRow>& rows);

}  // namespace swr
