#include "report/report_builder.hpp"

#include <chrono>
#include <ctime>

#include "report/gemm_heatmap.hpp"
#include "report/gnuplot.hpp"
#include "report/html_report.hpp"
#include "report/l2_miss_chart.hpp"
#include "report/roofline_chart.hpp"
#include "report/throughput_chart.hpp"

namespace swr::report {
namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M UTC", &parts);
  return text;
}

std::string gpu_label(const GpuResults& results) {
  const std::string device = results.records.empty() ? "" : results.records.front().gpu.device_name;
  return device.empty() ? results.name : results.name + " (" + device + ")";
}

// Which batch and heads the bench's regimes use, under the throughput titles.
std::string throughput_subtitle(const BenchResults* bench) {
  if (!bench) return "swr's tuned best per shape from the database (no bench result given).";
  std::string subtitle;
  for (const std::string regime : {"short", "long"}) {
    for (const BenchPoint& point : bench->points) {
      if (point.regime != regime) continue;
      subtitle += (subtitle.empty() ? "" : "; ") + bench->regime_title(regime);
      break;
    }
  }
  return subtitle;
}

// One attention pass's L2-misses and throughput charts, into `into` and `charts`.
void write_attention_charts(AttentionPass pass, const std::vector<ThroughputPanel>& throughput,
                            const std::string& throughput_note, const ReportInputs& inputs,
                            const std::string& gpu_label, AttentionCharts& into,
                            std::vector<ChartFiles>& charts) {
  into.l2_panels = l2_miss_panels(*inputs.results, pass);
  for (const L2MissPanel& panel : into.l2_panels) {
    into.l2_charts.push_back(write_l2_miss_chart(panel, gpu_label, inputs.directory));
    charts.push_back(into.l2_charts.back());
  }
  for (const ThroughputPanel& panel : throughput) {
    into.throughput_charts.push_back(
        write_throughput_chart(panel, gpu_label, throughput_note, inputs.directory));
    charts.push_back(into.throughput_charts.back());
  }
}

std::vector<ChartFiles> write_charts(ReportContent& content, const ReportInputs& inputs) {
  const std::filesystem::path& directory = inputs.directory;
  const GpuResults& results = *inputs.results;
  std::vector<ChartFiles> charts;
  write_attention_charts(AttentionPass::forward,
                         inputs.bench ? throughput_panels(*inputs.bench)
                                      : throughput_panels(results, AttentionPass::forward),
                         throughput_subtitle(inputs.bench), inputs, content.gpu_label,
                         content.forward, charts);
  write_attention_charts(AttentionPass::backward,
                         throughput_panels(results, AttentionPass::backward),
                         "swr's tuned best per shape from the database (the whole backward timed).",
                         inputs, content.gpu_label, content.backward, charts);
  content.roofline = roofline_of(results);
  if (!content.roofline.points.empty()) {
    content.roofline_chart = write_roofline_chart(content.roofline, content.gpu_label, directory);
    charts.push_back(*content.roofline_chart);
  }
  content.heatmaps = gemm_heatmaps(results);
  for (const GemmHeatmap& heatmap : content.heatmaps) {
    content.gemm_charts.push_back(write_gemm_heatmap_chart(heatmap, content.gpu_label, directory));
    charts.push_back(content.gemm_charts.back());
  }
  return charts;
}

}  // namespace

ReportOutcome build_report(const ReportInputs& inputs) {
  std::filesystem::create_directories(inputs.directory);
  ReportContent content;
  content.directory = inputs.directory;
  content.gpu_label = gpu_label(*inputs.results);
  content.source_label = inputs.source_label;
  content.generated_at = utc_now();
  content.results = inputs.results;
  content.bench = inputs.bench;

  ReportOutcome outcome;
  outcome.index = inputs.directory / "index.html";
  const std::vector<ChartFiles> charts = write_charts(content, inputs);
  for (const ChartFiles& chart : charts) {
    outcome.pngs.push_back(chart.png);
    if (!inputs.gnuplot) {
      std::error_code ignored;  // a PNG left from an earlier report would not show this data
      std::filesystem::remove(inputs.directory / chart.png, ignored);
      continue;
    }
    const RenderResult result =
        run_gnuplot(*inputs.gnuplot, inputs.directory, chart.script, chart.png);
    if (result.ok) {
      ++outcome.rendered;
    } else {
      outcome.failures.push_back(result.message);
    }
  }
  if (!inputs.gnuplot && !charts.empty()) {
    outcome.render_hint =
        "cd " + inputs.directory.string() + " && for f in *.gp; do gnuplot \"$f\"; done";
    content.render_note =
        "gnuplot was not found on PATH when this report was made: the charts' data (.dat) and "
        "scripts (.gp) are here, the PNGs are not. Install gnuplot (Debian: apt-get install "
        "gnuplot-nox) and render them with: " +
        outcome.render_hint;
  } else if (!outcome.failures.empty()) {
    content.render_note = std::to_string(outcome.failures.size()) +
                          " charts could not be rendered; first: " + outcome.failures.front();
  }
  write_html_report(content, outcome.index);
  return outcome;
}

}  // namespace swr::report
