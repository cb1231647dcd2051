#include "report/html_report.hpp"

#include <map>

#include "report/attention_pass.hpp"
#include "report/html_table.hpp"
#include "swr/attention_backward_config.hpp"

namespace swr::report {
namespace {

constexpr const char* kStyle = R"css(
body { font-family: sans-serif; margin: 2em auto; max-width: 1400px; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
th { background: #f3f3f3; } .n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption, .note { color: #555; font-size: 0.9em; max-width: 1100px; }
.missing { background: #fff4e0; border: 1px solid #e0b060; padding: 0.6em; }
code { background: #f3f3f3; padding: 0 3px; }
)css";

std::string chart_html(const ChartFiles& chart, const ReportContent& content) {
  std::string html = "<figure>\n";
  std::error_code ignored;
  if (std::filesystem::file_size(content.directory / chart.png, ignored) > 0 && !ignored) {
    html +=
        "<img src=\"" + html_escape(chart.png) + "\" alt=\"" + html_escape(chart.title) + "\">\n";
  } else {
    html += "<p class=\"missing\">" + html_escape(chart.png) +
            " was not rendered (see the top of this page)</p>\n";
  }
  html += "<figcaption>" + html_escape(chart.caption) + " Data: <a href=\"" +
          html_escape(chart.data) + "\">" + html_escape(chart.data) + "</a>, script: <a href=\"" +
          html_escape(chart.script) + "\">" + html_escape(chart.script) +
          "</a>.</figcaption>\n</figure>\n";
  return html;
}

std::string paragraph(const std::string& text, const char* css_class = "note") {
  return "<p class=\"" + std::string(css_class) + "\">" + html_escape(text) + "</p>\n";
}

std::string bench_cell(const BenchCandidate* candidate) {
  if (!candidate) return "-";
  if (candidate->ok()) return fixed(candidate->tflops, 0);
  return candidate->status;
}

std::string bench_section(const ReportContent& content) {
  std::string html = "<h2>swr against its peers</h2>\n";
  if (!content.bench) {
    html += paragraph(
        "No bench result was given (--bench FILE from bench/peer_grid.py): the charts below show "
        "swr's tuned best from the database only.");
    for (const ChartFiles& chart : content.forward.throughput_charts) {
      html += chart_html(chart, content);
    }
    return html;
  }
  const BenchResults& bench = *content.bench;
  html += paragraph("From " + bench.path.string() +
                    ". Ratio = peer time / swr time on the same inputs in the same run: above 1 "
                    "means swr is faster. Geometric mean over the points where both ran.");
  HtmlTable ratios(
      {"regime", "peer", ">points", ">geometric mean swr/peer", ">min", ">max", ">swr faster at"});
  for (const RegimeRatio& row : bench.regime_ratios()) {
    ratios.add_row({bench.regime_title(row.regime), row.peer, std::to_string(row.points),
                    times(row.geometric_mean), times(row.min), times(row.max),
                    std::to_string(row.swr_faster) + " of " + std::to_string(row.points)});
  }
  html += ratios.empty() ? paragraph("No point where swr and a peer both ran.") : ratios.render();
  for (const ChartFiles& chart : content.forward.throughput_charts) {
    html += chart_html(chart, content);
  }

  const std::vector<std::string> peers = bench.peers();
  std::vector<std::string> headers = {"point", "swr config", "config source", ">swr TFLOP/s"};
  for (const std::string& peer : peers) headers.push_back(">" + peer);
  for (const std::string& peer : peers) headers.push_back(">swr/" + peer);
  headers.push_back(">swr L2 misses");
  // Peers' misses exist only for the points counted with ncu (peer_grid.py --with-ncu).
  bool peer_misses = false;
  for (const BenchPoint& point : bench.points) {
    for (const auto& [name, candidate] : point.candidates) {
      peer_misses = peer_misses || (name != "swr" && candidate.l2_sector_misses);
    }
  }
  if (peer_misses) headers.push_back("peers' L2 misses (ncu)");
  HtmlTable points(headers);
  std::map<std::string, std::string> notes;  // status -> an example note
  for (const BenchPoint& point : bench.points) {
    const auto find = [&](const std::string& name) -> const BenchCandidate* {
      const auto found = point.candidates.find(name);
      return found == point.candidates.end() ? nullptr : &found->second;
    };
    const BenchCandidate* swr = find("swr");
    std::vector<std::string> row = {
        point.description, point.swr_config.empty() ? "-" : point.swr_config,
        point.swr_config_source.empty() ? "-" : point.swr_config_source, bench_cell(swr)};
    for (const std::string& peer : peers) row.push_back(bench_cell(find(peer)));
    for (const std::string& peer : peers) row.push_back(times(point.ratio_to(peer)));
    row.push_back(swr ? count(swr->l2_sector_misses) : "-");
    if (peer_misses) {
      std::string misses;
      for (const std::string& peer : peers) {
        const BenchCandidate* candidate = find(peer);
        if (!candidate || !candidate->l2_sector_misses) continue;
        misses += (misses.empty() ? "" : ", ") + peer + " " + count(candidate->l2_sector_misses);
      }
      row.push_back(misses.empty() ? "-" : misses);
    }
    points.add_row(std::move(row));
    for (const auto& [name, candidate] : point.candidates) {
      if (!candidate.ok() && !candidate.note.empty()) {
        notes.emplace(name + ": " + candidate.status, candidate.note);
      }
    }
  }
  html += "<h3>Every point (TFLOP/s)</h3>\n" + points.render();
  if (!notes.empty()) {
    html += "<p class=\"note\">Why a candidate did not run (one example each):</p>\n<ul>\n";
    for (const auto& [what, note] : notes) {
      html += "<li>" + html_escape(what) + " — " + html_escape(note) + "</li>\n";
    }
    html += "</ul>\n";
  }

  html += "<h3>Reproducibility record</h3>\n";
  HtmlTable record({"item", "value"});
  for (const auto& [key, value] : bench.record.items()) {
    record.add_row({key, value.is_string() ? value.get<std::string>() : value.dump()});
  }
  for (const auto& [key, value] : bench.method.items()) {
    record.add_row({"method: " + key, value.is_string() ? value.get<std::string>() : value.dump()});
  }
  return html + record.render();
}

// Each panel of one pass: its chart and the table behind it.
std::string l2_panels_html(const AttentionCharts& charts, const ReportContent& content) {
  std::string html;
  for (std::size_t i = 0; i < charts.l2_panels.size(); ++i) {
    const L2MissPanel& panel = charts.l2_panels[i];
    html += "<h3>" + html_escape(panel.shape) + "</h3>\n";
    html += chart_html(charts.l2_charts[i], content);
    std::vector<std::string> headers = {">S", ">cold misses"};
    for (const L2MissSeries& series : panel.series) headers.push_back(">" + series.label);
    std::map<double, std::vector<std::optional<double>>> rows;
    for (const SeriesPoint& point : panel.cold_misses) {
      rows[point.x].assign(panel.series.size() + 1, std::nullopt);
      rows[point.x][0] = point.y;
    }
    for (std::size_t s = 0; s < panel.series.size(); ++s) {
      for (const SeriesPoint& point : panel.series[s].points) {
        rows[point.x].resize(panel.series.size() + 1);
        rows[point.x][s + 1] = point.y;
      }
    }
    HtmlTable table(headers);
    for (const auto& [seq, values] : rows) {
      std::vector<std::string> row = {short_count(static_cast<long long>(seq))};
      for (const std::optional<double>& value : values) row.push_back(count(value));
      table.add_row(std::move(row));
    }
    html += table.render();
    if (panel.onset_seq) {
      html += paragraph("L2 model: misses beyond the cold ones expected from S ≈ " +
                        short_count(static_cast<long long>(*panel.onset_seq)) + ".");
    }
  }
  return html;
}

std::string l2_section(const ReportContent& content, AttentionPass pass) {
  const AttentionCharts& charts =
      pass == AttentionPass::forward ? content.forward : content.backward;
  std::string html = std::string("<h2>L2 misses") +
                     (pass == AttentionPass::backward ? " of the backward" : "") +
                     ": cyclic vs sawtooth " + walk_name(pass) + "</h2>\n";
  if (charts.l2_panels.empty()) {
    const std::string how = pass == AttentionPass::forward
                                ? "tune with counters at several --seq, e.g. bench/l2_sweep.sh"
                                : "tune --family attention-backward with counters at several --seq";
    return html + paragraph("No shape family with L2 counters at two or more sequence lengths in " +
                            std::string("this database (") + how + ").");
  }
  return html + l2_panels_html(charts, content);
}

int failed_variants(const ProblemResults& problem) {
  int failed = 0;
  for (const db::StoredMeasurement& m : problem.measurements) {
    failed += m.record.status == db::MeasurementStatus::ok ? 0 : 1;
  }
  return failed;
}

// "yes" when the backward variant sums dQ deterministically, "no" for atomics.
std::string deterministic_cell(const std::string& config_key) {
  const std::optional<AttentionBackwardConfig> config =
      AttentionBackwardConfig::from_key(config_key);
  if (!config) return "-";
  return config->dq == DqAccumulation::deterministic ? "yes" : "no";
}

// The backward's own section, after the forward's: per shape its best variant, then its throughput
// and L2 charts. Absent when the database has no backward results.
std::string backward_section(const ReportContent& content) {
  const std::vector<const ProblemResults*> problems =
      content.results->of_family(family_name(AttentionPass::backward));
  if (problems.empty()) return "";
  std::string html = "<h2>Attention backward: best variant per shape</h2>\n";
  html += paragraph(
      "dQ, dK and dV from Q, K, V, O, dO and L. The median time is the whole backward "
      "(preprocess, main kernel, postprocess); TFLOP/s from it (" +
      flop_count_text(AttentionPass::backward) +
      "); L2 misses are the main kernel's, where the tuner counted them. Deterministic: the "
      "variant sums dQ in K/V-tile order (key ending -det), the same bits on every run; "
      "otherwise by fp32 atomics.");
  HtmlTable table({"shape", "best variant", ">median ms", ">TFLOP/s", ">L2 misses", "deterministic",
                   ">measured", ">failed"});
  for (const ProblemResults* problem : problems) {
    const db::StoredMeasurement* best = problem->best();
    std::vector<std::string> row = {problem->problem.attention
                                        ? describe_attention_shape(*problem->problem.attention)
                                        : problem->problem.key};
    if (best) {
      const db::MeasurementRecord& r = best->record;
      row.insert(row.end(), {best->config_key, fixed(r.median_ms, 3), fixed(r.tflops, 1),
                             count(r.l2_sector_misses), deterministic_cell(best->config_key)});
    } else {
      row.insert(row.end(), {"(none valid)", "-", "-", "-", "-"});
    }
    row.push_back(std::to_string(problem->measurements.size()));
    row.push_back(std::to_string(failed_variants(*problem)));
    table.add_row(std::move(row));
  }
  html += table.render();
  for (const ChartFiles& chart : content.backward.throughput_charts) {
    html += chart_html(chart, content);
  }
  return html + l2_section(content, AttentionPass::backward);
}

std::string roofline_section(const ReportContent& content) {
  std::string html = "<h2>Roofline</h2>\n";
  const Roofline& roofline = content.roofline;
  if (!content.roofline_chart) {
    return html + paragraph("No best variant with DRAM counters (observed intensity) to place.");
  }
  if (!roofline.ridge_intensity()) {
    html += paragraph("No built-in profile for this GPU: the roofs are not drawn.");
  }
  html += chart_html(*content.roofline_chart, content);
  HtmlTable table({"problem", "best variant", ">observed FLOP/B", ">algorithmic FLOP/B", ">TFLOP/s",
                   ">of roofline"});
  for (const RooflinePoint& point : roofline.points) {
    table.add_row({point.label, point.config_key, fixed(point.observed_intensity, 0),
                   fixed(point.algorithmic_intensity, 0), fixed(point.tflops, 1),
                   percent(point.roofline_fraction)});
  }
  html += table.render();
  if (roofline.best_without_counters > 0) {
    html += paragraph(std::to_string(roofline.best_without_counters) +
                      " best variants have no DRAM counters and are not placed.");
  }
  return html;
}

std::string gemm_section(const ReportContent& content) {
  std::string html = "<h2>GEMM: swizzle stride by matrix size</h2>\n";
  if (content.heatmaps.empty()) {
    return html + paragraph("no GEMM results in this database");
  }
  for (std::size_t i = 0; i < content.heatmaps.size(); ++i) {
    const GemmHeatmap& heatmap = content.heatmaps[i];
    html += chart_html(content.gemm_charts[i], content);
    HtmlTable table({"size", "dtype", ">best stride", ">best TFLOP/s", ">worst TFLOP/s",
                     ">spread (max-min)/max", ">cuBLAS TFLOP/s", ">best/cuBLAS"});
    for (std::size_t row = 0; row < heatmap.sizes.size(); ++row) {
      std::optional<double> worst;
      for (const std::optional<double>& value : heatmap.tflops[row]) {
        if (value && (!worst || *value < *worst)) worst = value;
      }
      const std::optional<std::size_t> best = heatmap.best_column[row];
      const std::optional<double> top = best ? heatmap.tflops[row][*best] : std::nullopt;
      table.add_row({heatmap.sizes[row].label(), heatmap.dtype,
                     best ? std::to_string(heatmap.strides[*best]) : "-", fixed(top, 1),
                     fixed(worst, 1),
                     top && worst ? percent((*top - *worst) / *top) : std::string("-"),
                     fixed(heatmap.cublas_tflops[row], 1),
                     top && heatmap.cublas_tflops[row] ? times(*top / *heatmap.cublas_tflops[row])
                                                       : std::string("-")});
    }
    html += table.render();
  }
  return html;
}

std::string tuned_section(const ReportContent& content) {
  std::string html = "<h2>Tuned shapes in the database</h2>\n";
  HtmlTable table({"problem", "best variant", ">median ms", ">TFLOP/s", ">L2 misses",
                   ">L2 hit rate", ">DRAM GB", ">measured", ">failed"});
  for (const ProblemResults& problem : content.results->problems) {
    const db::StoredMeasurement* best = problem.best();
    std::vector<std::string> row = {describe_problem(problem.problem)};
    if (best) {
      const db::MeasurementRecord& r = best->record;
      const std::optional<double> dram =
          r.dram_read_bytes || r.dram_write_bytes
              ? std::optional<double>(
                    (r.dram_read_bytes.value_or(0) + r.dram_write_bytes.value_or(0)) / 1e9)
              : std::nullopt;
      row.insert(row.end(), {best->config_key, fixed(r.median_ms, 3), fixed(r.tflops, 1),
                             count(r.l2_sector_misses), percent(r.l2_hit_rate), fixed(dram, 3)});
    } else {
      row.insert(row.end(), {"(none valid)", "-", "-", "-", "-", "-"});
    }
    row.push_back(std::to_string(problem.measurements.size()));
    row.push_back(std::to_string(failed_variants(problem)));
    table.add_row(std::move(row));
  }
  return html + table.render();
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

void write_html_report(const ReportContent& content, const std::filesystem::path& file) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<title>swr report: " + html_escape(content.gpu_label) + "</title>\n";
  html += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  html += "<h1>swr report: " + html_escape(content.gpu_label) + "</h1>\n";
  html += paragraph("Measurements: " + content.source_label + ". Generated " +
                    content.generated_at + " by swr-tune " + SWR_VERSION + ".");
  if (!content.render_note.empty()) html += paragraph(content.render_note, "missing");
  html += bench_section(content) + l2_section(content, AttentionPass::forward) +
          backward_section(content) + roofline_section(content) + gemm_section(content) +
          tuned_section(content);
  html += "</body>\n</html>\n";
  write_text_file(file, html);
}

}  // namespace swr::report
