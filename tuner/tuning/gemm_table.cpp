#include "tuner/tuning/gemm_table.hpp"

#include <cstdio>
#include <ostream>
#include <string>

#include "tuner/tuning/result_table.hpp"

namespace swr {

void print_gemm_table(std::ostream& out, const GemmProblem& problem, const GpuProfile& gpu,
                      const std::vector<db::StoredMeasurement>& measurements,
                      const GemmBaseline& baseline, std::size_t rows) {
  int failed = 0;
  for (const db::StoredMeasurement& measurement : measurements)
    if (measurement.record.status != db::MeasurementStatus::ok) ++failed;
  out << "\ngemm " << problem.key() << " on " << gpu.name << " (" << gpu.description
      << "): " << measurements.size() << " variants measured, " << failed << " failed\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  %-4s %-36s %10s %9s %8s %7s %8s\n", "#", "variant",
                "median ms", "TFLOP/s", "x cuBLAS", "L2 hit", "DRAM GB");
  out << line;
  if (baseline.median_ms) {
    std::snprintf(line, sizeof(line), "  %-4s %-36s %10.3f %9.1f %8s\n", "-", "cuBLAS",
                  *baseline.median_ms, gemm_tflops(problem, *baseline.median_ms), "1.000");
  } else {
    std::snprintf(line, sizeof(line), "  %-4s %-36s %s\n", "-", "cuBLAS",
                  baseline.note.empty() ? "not measured" : baseline.note.c_str());
  }
  out << line;
  std::size_t shown = 0;
  for (const db::StoredMeasurement& measurement : measurements) {
    const db::MeasurementRecord& record = measurement.record;
    if (record.status != db::MeasurementStatus::ok || !record.median_ms) continue;
    if (shown == rows) break;
    ++shown;
    std::string ratio = "-";
    if (baseline.median_ms) {
      char text[32];
      std::snprintf(text, sizeof(text), "%.3f", *baseline.median_ms / *record.median_ms);
      ratio = text;
    }
    std::snprintf(line, sizeof(line), "  %-4zu %-36s %10s %9s %8s %7s %8s\n", shown,
                  measurement.config_key.c_str(), format_milliseconds(record.median_ms).c_str(),
                  format_tflops(record.tflops).c_str(), ratio.c_str(),
                  format_hit_rate(record.l2_hit_rate).c_str(),
                  format_dram_gigabytes(record).c_str());
    out << line;
  }
  if (shown == 0) out << "  no valid variant\n";
}

}  // namespace swr
