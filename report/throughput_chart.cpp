#include "report/throughput_chart.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "report/l2_miss_chart.hpp"

namespace swr::report {

namespace {

using PanelKey = std::tuple<std::string, bool>;  // dtype, causal

std::string stem_of(AttentionPass pass, const PanelKey& key) {
  return "throughput_" + std::string(stem_prefix(pass)) + std::get<0>(key) +
         (std::get<1>(key) ? "_causal" : "_noncausal");
}

std::string shape_of(const PanelKey& key) {
  return std::get<0>(key) + (std::get<1>(key) ? " causal" : " non-causal");
}

void sort_points(std::vector<ThroughputSeries>& series) {
  for (ThroughputSeries& line : series) {
    std::sort(line.points.begin(), line.points.end(),
              [](const SeriesPoint& a, const SeriesPoint& b) { return a.x < b.x; });
  }
}

// "B=8 H=1" when a regime's points share the batch, "B·S=16384 H=16" when they share B*S.
std::string batch_and_heads(const std::vector<const BenchPoint*>& points) {
  std::set<long long> batches, tokens, heads;
  for (const BenchPoint* point : points) {
    batches.insert(point->batch);
    tokens.insert(static_cast<long long>(point->batch) * point->seq);
    heads.insert(point->heads);
  }
  std::string label = batches.size() == 1  ? "B=" + std::to_string(*batches.begin())
                      : tokens.size() == 1 ? "B·S=" + std::to_string(*tokens.begin())
                                           : "B varies";
  return label + (heads.size() == 1 ? " H=" + std::to_string(*heads.begin()) : "");
}

std::vector<RegimeSpan> regime_spans(const BenchResults& bench, const PanelKey& key) {
  std::map<std::string, std::vector<const BenchPoint*>> by_regime;
  for (const BenchPoint& point : bench.points) {
    if (point.family == "attention" && point.kv_heads == point.heads &&
        PanelKey{point.dtype, point.causal} == key) {
      by_regime[point.regime].push_back(&point);
    }
  }
  std::vector<RegimeSpan> spans;
  for (const auto& [regime, points] : by_regime) {
    RegimeSpan span{batch_and_heads(points), 1e300, 0};
    for (const BenchPoint* point : points) {
      span.first_seq = std::min(span.first_seq, static_cast<double>(point->seq));
      span.last_seq = std::max(span.last_seq, static_cast<double>(point->seq));
    }
    spans.push_back(span);
  }
  std::sort(spans.begin(), spans.end(),
            [](const RegimeSpan& a, const RegimeSpan& b) { return a.first_seq < b.first_seq; });
  return spans;
}

}  // namespace

std::vector<ThroughputPanel> throughput_panels(const BenchResults& bench) {
  std::vector<std::string> candidates = {"swr"};
  for (const std::string& peer : bench.peers()) candidates.push_back(peer);
  // panel -> head dim -> candidate -> points
  std::map<PanelKey, std::map<int, std::map<std::string, std::vector<SeriesPoint>>>> grouped;
  std::map<PanelKey, std::map<int, std::string>> swr_notes;
  for (const BenchPoint& point : bench.points) {
    // One line per candidate over S: GQA points (another K/V traffic) stay in the tables only.
    if (point.family != "attention" || point.kv_heads != point.heads) continue;
    const PanelKey key{point.dtype, point.causal};
    auto& by_candidate = grouped[key][point.head_dim];
    for (const auto& [name, candidate] : point.candidates) {
      if (candidate.ok() && candidate.tflops) {
        by_candidate[name].push_back({static_cast<double>(point.seq), *candidate.tflops});
      }
    }
    const auto swr = point.candidates.find("swr");
    if (swr != point.candidates.end() && swr->second.status == "unsupported") {
      swr_notes[key][point.head_dim] = "swr: no kernel for D=" + std::to_string(point.head_dim);
    }
  }
  std::vector<ThroughputPanel> panels;
  for (const auto& [key, by_head_dim] : grouped) {
    ThroughputPanel panel{AttentionPass::forward,
                          stem_of(AttentionPass::forward, key),
                          shape_of(key),
                          {},
                          regime_spans(bench, key)};
    for (const auto& [head_dim, by_candidate] : by_head_dim) {
      ThroughputPlot plot{head_dim, {}, swr_notes[key][head_dim]};
      for (const std::string& name : candidates) {
        const auto found = by_candidate.find(name);
        if (found == by_candidate.end()) continue;
        plot.series.push_back({name, name == "swr", found->second});
      }
      sort_points(plot.series);
      panel.plots.push_back(std::move(plot));
    }
    panels.push_back(std::move(panel));
  }
  return panels;
}

std::vector<ThroughputPanel> throughput_panels(const GpuResults& results, AttentionPass pass) {
  // Per panel and head dim, one series per (batch, heads, K/V heads).
  std::map<PanelKey, std::map<int, std::map<std::tuple<int, int, int>, std::vector<SeriesPoint>>>>
      grouped;
  for (const ProblemResults* problem : results.of_family(family_name(pass))) {
    const db::StoredMeasurement* best = problem->best();
    if (!problem->problem.attention || !best || !best->record.tflops) continue;
    const AttentionProblem& shape = *problem->problem.attention;
    if (shape.seq_q != shape.seq_kv) continue;
    const PanelKey key{std::string(to_string(shape.dtype)), shape.causal};
    grouped[key][shape.head_dim][{shape.batch, shape.heads, shape.kv_head_count()}].push_back(
        {static_cast<double>(shape.seq_q), *best->record.tflops});
  }
  std::vector<ThroughputPanel> panels;
  for (const auto& [key, by_head_dim] : grouped) {
    ThroughputPanel panel{pass, stem_of(pass, key), shape_of(key), {}, {}};
    for (const auto& [head_dim, by_batch] : by_head_dim) {
      ThroughputPlot plot{head_dim, {}, ""};  // the panel's subtitle says it is swr alone
      for (const auto& [heads, points] : by_batch) {
        const auto& [batch, query_heads, kv_heads] = heads;
        std::string label =
            "swr tuned best, B" + std::to_string(batch) + " H" + std::to_string(query_heads);
        if (kv_heads != query_heads) label += "/" + std::to_string(kv_heads) + " K/V";
        plot.series.push_back({label, true, points});
      }
      sort_points(plot.series);
      panel.plots.push_back(std::move(plot));
    }
    panels.push_back(std::move(panel));
  }
  return panels;
}

namespace {

std::string line_style(const ThroughputSeries& series, std::size_t index) {
  static const std::map<std::string, std::string> kPeerColours = {{"flash2", "#1f77b4"},
                                                                  {"cudnn", "#2ca02c"},
                                                                  {"efficient", "#ff7f0e"},
                                                                  {"math", "#9467bd"},
                                                                  {"cublas", "#8c564b"}};
  static const char* const kOtherColours[] = {"#000000", "#d62728", "#17becf", "#7f7f7f"};
  const auto peer = kPeerColours.find(series.label);
  if (series.label == "swr") return "lw 3.5 pt 7 ps 1.3 lc rgb '#000000'";
  if (peer != kPeerColours.end()) return "lw 2 pt 5 ps 1.0 dt 1 lc rgb '" + peer->second + "'";
  return "lw 3 pt 7 ps 1.2 lc rgb '" + std::string(kOtherColours[index % 4]) + "'";
}

std::string legend_title(const std::string& label) {
  static const std::map<std::string, std::string> kNames = {
      {"swr", "swr (best variant)"},      {"flash2", "FlashAttention-2 (SDPA FLASH)"},
      {"cudnn", "cuDNN (SDPA CUDNN)"},    {"efficient", "mem-efficient (SDPA EFFICIENT)"},
      {"math", "PyTorch math (unfused)"}, {"cublas", "cuBLAS"}};
  const auto found = kNames.find(label);
  return found == kNames.end() ? label : found->second;
}

// A dotted line between regimes (where the batch changes), each regime's batch and heads above.
std::string regime_marks(const ThroughputPanel& panel) {
  std::string marks;
  for (std::size_t i = 0; i < panel.regimes.size() && panel.regimes.size() > 1; ++i) {
    const RegimeSpan& span = panel.regimes[i];
    const double middle = std::sqrt(span.first_seq * span.last_seq);
    marks += "set label " + std::to_string(i + 1) + " " + gnuplot_string(span.label) +
             " at first " + data_number(middle) + ", graph 0.97 center tc rgb 'gray30' font ',9'\n";
    if (i + 1 < panel.regimes.size()) {
      const std::string at = data_number(std::sqrt(span.last_seq * panel.regimes[i + 1].first_seq));
      marks += "set arrow " + std::to_string(i + 1) + " from first " + at + ", graph 0 to first " +
               at + ", graph 1 nohead dt 3 lc rgb 'gray50'\n";
    }
  }
  return marks;
}

}  // namespace

ChartFiles write_throughput_chart(const ThroughputPanel& panel, const std::string& gpu_label,
                                  const std::string& subtitle,
                                  const std::filesystem::path& directory) {
  ChartFiles files;
  const std::string pass = pass_name(panel.pass);
  files.title = "Throughput vs sequence length, attention " + pass + ": " + panel.shape;
  files.png = panel.stem + ".png";
  files.script = panel.stem + ".gp";
  files.data = panel.stem + ".dat";
  files.caption = "TFLOP/s from the median time (" + flop_count_text(panel.pass) + "). " + subtitle;

  std::vector<std::vector<std::vector<std::optional<double>>>> blocks;
  std::vector<std::string> comment = {files.title + " on " + gpu_label,
                                      "columns: sequence length S, TFLOP/s"};
  std::vector<double> seqs, rates;
  for (const ThroughputPlot& plot : panel.plots) {
    for (const ThroughputSeries& series : plot.series) {
      comment.push_back("index " + std::to_string(blocks.size()) +
                        ": D=" + std::to_string(plot.head_dim) + " " + series.label);
      std::vector<std::vector<std::optional<double>>> rows;
      for (const SeriesPoint& point : series.points) {
        rows.push_back({point.x, point.y});
        seqs.push_back(point.x);
        rates.push_back(point.y);
      }
      blocks.push_back(std::move(rows));
    }
  }
  write_text_file(directory / files.data, data_blocks(comment, blocks));

  const std::size_t count = std::max<std::size_t>(panel.plots.size(), 1);
  const int columns = count == 4 ? 2 : static_cast<int>(count);
  const int rows = count == 4 ? 2 : 1;
  const bool log_rates = !rates.empty() && *std::min_element(rates.begin(), rates.end()) > 0 &&
                         *std::max_element(rates.begin(), rates.end()) >
                             10 * *std::min_element(rates.begin(), rates.end());
  std::string script = png_terminal(files.png, 760 * columns + 80, 560 * rows + 90) + chart_style();
  script += "set multiplot layout " + std::to_string(rows) + "," + std::to_string(columns) +
            " title " +
            gnuplot_string("Attention " + pass + " throughput vs sequence length, " + panel.shape +
                           ", on " + gpu_label + "\n" + subtitle) +
            " font ',13'\n";
  script += "set xlabel 'sequence length S (tokens, log scale)'\n";
  script += std::string("set ylabel 'TFLOP/s") + (log_rates ? " (log scale)'\n" : "'\n");
  script += log_rates ? "set logscale xy\n" : "set logscale x\nset yrange [0:*]\n";
  script += sequence_tics(seqs);
  script += "set format y '%g'\n";
  script += "set key bottom right Left reverse font ',9'\n";
  script += regime_marks(panel);
  std::size_t block = 0;
  for (const ThroughputPlot& plot : panel.plots) {
    script += "set title " +
              gnuplot_string("head dim D=" + std::to_string(plot.head_dim) +
                             (plot.note.empty() ? "" : "  (" + plot.note + ")")) +
              "\n";
    if (plot.series.empty()) {
      script += "plot NaN notitle\n";
      continue;
    }
    script += "plot \\\n";
    for (std::size_t i = 0; i < plot.series.size(); ++i, ++block) {
      const ThroughputSeries& series = plot.series[i];
      script += "  " + gnuplot_string(files.data) + " index " + std::to_string(block) +
                " using 1:2 with linespoints " + line_style(series, i) + " title " +
                gnuplot_string(legend_title(series.label)) +
                (i + 1 < plot.series.size() ? ", \\\n" : "\n");
    }
  }
  script += "unset multiplot\n";
  write_text_file(directory / files.script, script);
  return files;
}

}  // namespace swr::report
