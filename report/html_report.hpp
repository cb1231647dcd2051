// index.html of a report: the charts with the tables behind them, and the reproducibility record
// of the bench run. Plain HTML and a little CSS, no script, so that it opens from disk anywhere.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/bench_results.hpp"
#include "report/gemm_heatmap.hpp"
#include "report/gnuplot.hpp"
#include "report/gpu_results.hpp"
#include "report/l2_miss_chart.hpp"
#include "report/roofline_chart.hpp"

namespace swr::report {

// One attention pass's charts: its L2-misses panels (one chart each) and its throughput charts.
struct AttentionCharts {
  std::vector<L2MissPanel> l2_panels;
  std::vector<ChartFiles> l2_charts;  // one per panel
  std::vector<ChartFiles> throughput_charts;
};

struct ReportContent {
  std::filesystem::path directory;  // where index.html and the charts are
  std::string gpu_label;            // "h200 (NVIDIA H200)"
  std::string source_label;         // where the measurements came from
  std::string generated_at;         // UTC
  const GpuResults* results = nullptr;
  const BenchResults* bench = nullptr;  // null without --bench

  AttentionCharts forward;   // throughput from the bench when given
  AttentionCharts backward;  // from the database; no section without backward results
  Roofline roofline;
  std::optional<ChartFiles> roofline_chart;
  std::vector<GemmHeatmap> heatmaps;
  std::vector<ChartFiles> gemm_charts;  // one per heatmap

  // Shown at the top when not every PNG exists: why, and the command that renders them. A chart
  // whose PNG is missing is shown as a note with its data and script.
  std::string render_note;
};

void write_html_report(const ReportContent& content, const std::filesystem::path& file);

// Text with &, <, >, " escaped.
std::string html_escape(const std::string& text);

}  // namespace swr::report
