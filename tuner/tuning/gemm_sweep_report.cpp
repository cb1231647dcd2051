#include "tuner/tuning/gemm_sweep_report.hpp"

#include "swr/gemm_config.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace swr {
namespace {

double square_tflops(int size, double ms) {
  return 2.0 * size * static_cast<double>(size) * size / (ms * 1e-3) / 1e12;
}

std::string number(const char* format, std::optional<double> value) {
  if (!value) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), format, *value);
  return text;
}

}  // namespace

GemmSweepSummary summarize_sweep_row(const GemmSweepRow& row) {
  GemmSweepSummary summary;
  summary.size = row.size;
  if (row.cublas_ms) summary.cublas_tflops = square_tflops(row.size, *row.cublas_ms);
  double lowest = 0;
  for (const GemmSweepCell& cell : row.cells) {
    if (!cell.median_ms) continue;
    const double tflops = square_tflops(row.size, *cell.median_ms);
    if (summary.strides_measured == 0 || tflops < lowest) lowest = tflops;
    if (!summary.best_tflops || tflops > *summary.best_tflops) {
      summary.best_tflops = tflops;
      summary.best_stride = cell.stride;
    }
    ++summary.strides_measured;
  }
  if (summary.best_tflops) {
    summary.sensitivity = (*summary.best_tflops - lowest) / *summary.best_tflops;
    if (summary.cublas_tflops)
      summary.ratio_to_cublas = *summary.best_tflops / *summary.cublas_tflops;
  }
  return summary;
}

std::string gemm_sweep_markdown(const std::vector<GemmSweepRow>& rows, const GpuProfile& gpu,
                                const std::string& variant, const std::string& dtype,
                                const std::string& command) {
  std::ostringstream out;
  out << "# GEMM block-swizzle sweep on " << gpu.description << " (" << gpu.name << ", " << gpu.arch
      << ", " << gpu.sm_count << " SMs, " << gpu.l2_bytes / (1024 * 1024) << " MiB L2)\n\n"
      << "Command: `" << command << "`\n\n"
      << "Kernel: `" << variant << "` ("
      << (GemmConfig::from_key(variant).value_or(GemmConfig{}).path == InstructionPath::wgmma
              ? "wgmma m64nNk16, TMA + mbarrier ring, warp-specialized, persistent"
              : "mma.sync m16n8k16, cp.async pipeline")
      << "), " << dtype
      << " in and out, fp32 accumulation, row-major A, B, C; the stride is the width in elements "
         "of a band of tile columns walked row by row (0 = plain row-major order). cuBLAS "
         "(cublasGemmEx, default algorithm) measured in the same run. Times: median of the "
         "tuner's timed runs, each from a flushed L2, device events.\n\n";
  out << "## Best stride per size (the paper's Table 2)\n\n"
      << "| Size | Best stride | TFLOP/s | cuBLAS TFLOP/s | vs cuBLAS |\n"
      << "|---|---|---|---|---|\n";
  for (const GemmSweepRow& row : rows) {
    const GemmSweepSummary s = summarize_sweep_row(row);
    out << "| " << row.size << "³ | "
        << (s.best_stride ? std::to_string(*s.best_stride) : std::string("-")) << " | "
        << number("%.1f", s.best_tflops) << " | " << number("%.1f", s.cublas_tflops) << " | "
        << (s.ratio_to_cublas ? number("%.1f", *s.ratio_to_cublas * 100) + "%" : "-") << " |\n";
  }
  out << "\n## Sensitivity to the stride (the paper's Table 3)\n\n"
      << "(max − min) / max of TFLOP/s over the strides measured at each size.\n\n"
      << "| Size | Sensitivity | Strides measured |\n|---|---|---|\n";
  for (const GemmSweepRow& row : rows) {
    const GemmSweepSummary s = summarize_sweep_row(row);
    out << "| " << row.size << "³ | "
        << (s.sensitivity ? number("%.1f", *s.sensitivity * 100) + "%" : "-") << " | "
        << s.strides_measured << " |\n";
  }
  out << "\n## TFLOP/s per size and stride\n\n| Size |";
  if (!rows.empty()) {
    for (const GemmSweepCell& cell : rows.front().cells) out << " " << cell.stride << " |";
    out << " cuBLAS |\n|---|";
    for (std::size_t i = 0; i <= rows.front().cells.size(); ++i) out << "---|";
    out << "\n";
  }
  for (const GemmSweepRow& row : rows) {
    out << "| " << row.size << "³ |";
    for (const GemmSweepCell& cell : row.cells) {
      out << " "
          << (cell.median_ms ? number("%.1f", square_tflops(row.size, *cell.median_ms)) : "-")
          << " |";
    }
    out << " " << (row.cublas_ms ? number("%.1f", square_tflops(row.size, *row.cublas_ms)) : "-")
        << " |\n";
  }
  out << "\nStrides that give the same tile order on a size (a band as wide as the grid is plain "
         "row-major) are measured separately; their differences are noise.\n";
  return out.str();
}

std::string gemm_sweep_csv(const std::vector<GemmSweepRow>& rows) {
  std::ostringstream out;
  out << "size,stride,tile_order,median_ms,tflops,ratio_to_cublas\n";
  for (const GemmSweepRow& row : rows) {
    if (row.cublas_ms) {
      out << row.size << ",-1,cublas," << *row.cublas_ms << ","
          << square_tflops(row.size, *row.cublas_ms) << ",1\n";
    }
    for (const GemmSweepCell& cell : row.cells) {
      out << row.size << "," << cell.stride << "," << cell.tile_order << ",";
      if (cell.median_ms) {
        out << *cell.median_ms << "," << square_tflops(row.size, *cell.median_ms) << ",";
        if (row.cublas_ms) out << *row.cublas_ms / *cell.median_ms;
      } else {
        out << ",,";
      }
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace swr
