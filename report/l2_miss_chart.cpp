#include "report/l2_miss_chart.hpp"

#include <algorithm>
#include <set>

namespace swr::report {
namespace {

const char* const kTwinColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};

std::string describe_onset(const L2MissPanel& panel, double low, double high) {
  if (!panel.onset_seq || *panel.onset_seq < low || *panel.onset_seq > high) return "";
  const std::string at = data_number(*panel.onset_seq);
  return "set arrow 1 from first " + at + ", graph 0 to first " + at +
         ", graph 1 nohead dt 4 lw 1.5 lc rgb 'gray40'\n"
         "set label 1 'model: K/V in flight exceed the usable L2' at first " +
         at + ", graph 0.04 left offset character 0.6, 0 tc rgb 'gray30' font ',10'\n";
}

}  // namespace

std::string sequence_tics(const std::vector<double>& values) {
  std::set<double> distinct(values.begin(), values.end());
  std::string tics = "set xtics (";
  bool first = true;
  for (double value : distinct) {
    tics += (first ? "" : ", ") + gnuplot_string(short_count(static_cast<long long>(value))) + " " +
            data_number(value);
    first = false;
  }
  tics += ")\n";
  if (!distinct.empty()) {
    tics += "set xrange [" + data_number(*distinct.begin() / 1.4) + ":" +
            data_number(*distinct.rbegin() * 1.4) + "]\n";
  }
  return tics;
}

ChartFiles write_l2_miss_chart(const L2MissPanel& panel, const std::string& gpu_label,
                               const std::filesystem::path& directory) {
  ChartFiles files;
  files.title = "L2 misses vs sequence length: " + panel.shape;
  files.png = panel.stem + ".png";
  files.script = panel.stem + ".gp";
  files.data = panel.stem + ".dat";
  files.caption =
      std::string(panel.twins ? "Each colour is one variant in both K/V orders (solid: cyclic, "
                                "dashed: sawtooth); "
                              : "The fastest variant of each K/V order at each S; ") +
      "misses are the tuner's CUPTI counter lts__t_sectors_srcunit_tex_lookup_miss.sum, L2 "
      "flushed before every pass. Black dotted: cold misses (every byte of Q, K, V, O once).";

  std::vector<std::vector<std::vector<std::optional<double>>>> blocks;
  std::vector<double> seqs;
  for (const L2MissSeries& series : panel.series) {
    std::vector<std::vector<std::optional<double>>> rows;
    for (const SeriesPoint& point : series.points) {
      rows.push_back({point.x, point.y});
      seqs.push_back(point.x);
    }
    blocks.push_back(std::move(rows));
  }
  std::vector<std::vector<std::optional<double>>> cold;
  for (const SeriesPoint& point : panel.cold_misses) cold.push_back({point.x, point.y});
  blocks.push_back(std::move(cold));
  std::vector<std::string> comment = {files.title + " on " + gpu_label,
                                      "columns: sequence length S, L2 sector misses"};
  for (std::size_t i = 0; i < panel.series.size(); ++i) {
    comment.push_back("index " + std::to_string(i) + ": " + panel.series[i].label);
  }
  comment.push_back("index " + std::to_string(panel.series.size()) +
                    ": cold misses (closed-form compulsory sectors)");
  write_text_file(directory / files.data, data_blocks(comment, blocks));

  const auto [low, high] = std::minmax_element(seqs.begin(), seqs.end());
  std::string script = png_terminal(files.png, 1100, 700) + chart_style();
  script += "set title " +
            gnuplot_string("L2 misses vs sequence length, cyclic vs sawtooth K/V order\n" +
                           panel.shape + " on " + gpu_label) +
            "\n";
  script += "set xlabel 'sequence length S = S_q = S_kv (tokens, log scale)'\n";
  script += "set ylabel 'L2 sector misses (32-byte sectors, log scale)'\n";
  script += "set logscale xy\nset format y '%.0s%c'\n";
  script += sequence_tics(seqs);
  script += "set key top left Left reverse\n";
  if (!seqs.empty()) script += describe_onset(panel, *low, *high);
  script += "plot \\\n";
  for (std::size_t i = 0; i < panel.series.size(); ++i) {
    const L2MissSeries& series = panel.series[i];
    const bool sawtooth = series.order == KvOrder::sawtooth;
    const std::string colour =
        panel.twins ? kTwinColours[series.twin_index % 4] : (sawtooth ? "#ff7f0e" : "#1f77b4");
    script += "  " + gnuplot_string(files.data) + " index " + std::to_string(i) +
              " using 1:2 with linespoints lw 2.2 ps 1.3 pt " + (sawtooth ? "5" : "7") + " dt " +
              (sawtooth ? "2" : "1") + " lc rgb '" + colour + "' title " +
              gnuplot_string(series.label) + ", \\\n";
  }
  script +=
      "  " + gnuplot_string(files.data) + " index " + std::to_string(panel.series.size()) +
      " using 1:2 with lines lw 2 dt 3 lc rgb 'black' title 'cold misses (Q, K, V, O once)'\n";
  write_text_file(directory / files.script, script);
  return files;
}

}  // namespace swr::report
