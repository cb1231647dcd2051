#include "report/roofline_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/attention_pass.hpp"

namespace swr::report {

namespace {

std::string group_of(const db::StoredProblem& problem) {
  if (problem.attention) {
    const bool backward = problem.family == family_name(AttentionPass::backward);
    return std::string(backward ? "attention backward D" : "attention D") +
           std::to_string(problem.attention->head_dim) +
           (problem.attention->causal ? " causal" : "");
  }
  if (problem.family == "gemm") return "GEMM " + problem.json.value("dtype", std::string());
  return problem.family;
}

}  // namespace

std::optional<double> Roofline::ridge_intensity() const {
  if (!peak_tflops || !bandwidth_tb_per_s || *bandwidth_tb_per_s <= 0) return std::nullopt;
  return *peak_tflops / *bandwidth_tb_per_s;  // TFLOP/s over TB/s = FLOP/byte
}

Roofline roofline_of(const GpuResults& results) {
  Roofline roofline;
  if (results.profile && results.profile->peak_tensor_flops > 0 &&
      results.profile->dram_bytes_per_second > 0) {
    roofline.peak_tflops = results.profile->peak_tensor_flops / 1e12;
    roofline.bandwidth_tb_per_s = results.profile->dram_bytes_per_second / 1e12;
  }
  for (const ProblemResults& problem : results.problems) {
    const db::StoredMeasurement* best = problem.best();
    if (!best) continue;
    const db::MeasurementRecord& record = best->record;
    if (!record.observed_intensity || *record.observed_intensity <= 0 || !record.tflops ||
        *record.tflops <= 0) {
      ++roofline.best_without_counters;
      continue;
    }
    RooflinePoint point;
    point.group = group_of(problem.problem);
    point.label = describe_problem(problem.problem);
    point.config_key = best->config_key;
    point.observed_intensity = *record.observed_intensity;
    point.algorithmic_intensity = record.algorithmic_intensity;
    point.tflops = *record.tflops;
    point.roofline_fraction = record.roofline_fraction;
    if (std::find(roofline.groups.begin(), roofline.groups.end(), point.group) ==
        roofline.groups.end()) {
      roofline.groups.push_back(point.group);
    }
    roofline.points.push_back(std::move(point));
  }
  return roofline;
}

namespace {

const char* const kGroupColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                     "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

std::string rounded(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f", value);
  return text;
}

}  // namespace

ChartFiles write_roofline_chart(const Roofline& roofline, const std::string& gpu_label,
                                const std::filesystem::path& directory) {
  ChartFiles files;
  files.title = "Roofline: best variant per shape";
  files.png = "roofline.png";
  files.script = "roofline.gp";
  files.data = "roofline.dat";
  files.caption =
      "Filled: observed arithmetic intensity (FLOPs over the DRAM bytes read and written, from "
      "the counters) and achieved TFLOP/s of each shape's best variant; open: the algorithmic "
      "intensity (each byte of the inputs and output once), the bound the point could move "
      "right to. Roofs from the GPU profile (dense fp16/bf16 tensor peak, HBM bandwidth).";

  std::vector<std::vector<std::vector<std::optional<double>>>> blocks;
  std::vector<std::string> comment = {files.title + " on " + gpu_label,
                                      "columns: intensity (FLOP/byte), TFLOP/s"};
  std::vector<std::vector<std::optional<double>>> connectors;
  double low_x = 1e30, high_x = 0, low_y = 1e30, high_y = 0;
  for (const std::string& group : roofline.groups) {
    std::vector<std::vector<std::optional<double>>> observed, algorithmic;
    for (const RooflinePoint& point : roofline.points) {
      if (point.group != group) continue;
      observed.push_back({point.observed_intensity, point.tflops});
      low_x = std::min(low_x, point.observed_intensity);
      high_x = std::max(high_x, point.observed_intensity);
      low_y = std::min(low_y, point.tflops);
      high_y = std::max(high_y, point.tflops);
      if (point.algorithmic_intensity && *point.algorithmic_intensity > 0) {
        algorithmic.push_back({*point.algorithmic_intensity, point.tflops});
        connectors.push_back(
            {point.observed_intensity, point.tflops, *point.algorithmic_intensity});
        low_x = std::min(low_x, *point.algorithmic_intensity);
        high_x = std::max(high_x, *point.algorithmic_intensity);
      }
    }
    comment.push_back("index " + std::to_string(blocks.size()) + ": " + group + " observed");
    blocks.push_back(std::move(observed));
    comment.push_back("index " + std::to_string(blocks.size()) + ": " + group + " algorithmic");
    blocks.push_back(std::move(algorithmic));
  }
  comment.push_back("index " + std::to_string(blocks.size()) +
                    ": observed intensity, TFLOP/s, algorithmic intensity");
  blocks.push_back(std::move(connectors));
  write_text_file(directory / files.data, data_blocks(comment, blocks));

  const std::optional<double> ridge = roofline.ridge_intensity();
  if (ridge) {
    low_x = std::min(low_x, *ridge / 10);
    high_x = std::max(high_x, *ridge * 10);
    high_y = std::max(high_y, *roofline.peak_tflops);
    low_y = std::min(low_y, *roofline.peak_tflops / 100);
  }
  if (high_x <= 0) low_x = 1, high_x = 1e4, low_y = 1, high_y = 1e3;  // nothing to place
  std::string script = png_terminal(files.png, 1100, 720) + chart_style();
  script += "set title " +
            gnuplot_string("Roofline on " + gpu_label +
                           ": each shape's best variant at its observed arithmetic intensity") +
            "\n";
  script += "set xlabel 'arithmetic intensity (FLOP per DRAM byte, log scale)'\n";
  script += "set ylabel 'achieved TFLOP/s (log scale)'\n";
  script += "set logscale xy\nset format x '%.0s%c'\n";
  script += "set xrange [" + data_number(low_x / 3) + ":" + data_number(high_x * 3) + "]\n";
  script += "set yrange [" + data_number(low_y / 3) + ":" + data_number(high_y * 1.8) + "]\n";
  script += "set key bottom right font ',10'\nset samples 600\n";
  std::string plot = "plot ";
  if (ridge) {
    const std::string peak = data_number(*roofline.peak_tflops);
    const std::string bandwidth = data_number(*roofline.bandwidth_tb_per_s);
    script +=
        "roof(x) = x * " + bandwidth + " < " + peak + " ? x * " + bandwidth + " : " + peak + "\n";
    script += "set arrow 1 from first " + data_number(*ridge) + ", graph 0 to first " +
              data_number(*ridge) + ", first " + peak +
              " nohead dt 3 lc rgb 'gray50'\n"
              "set label 1 " +
              gnuplot_string("ridge " + rounded(*ridge) + " FLOP/B") + " at first " +
              data_number(*ridge) + ", graph 0.04 left offset character 0.5, 0 tc rgb 'gray30'\n";
    plot += "roof(x) with lines lw 3 lc rgb '#444444' title " +
            gnuplot_string("roofline: HBM " + data_number(*roofline.bandwidth_tb_per_s) +
                           " TB/s, tensor peak " + rounded(*roofline.peak_tflops) + " TFLOP/s") +
            ", \\\n  ";
  }
  plot += gnuplot_string(files.data) + " index " + std::to_string(blocks.size() - 1) +
          " using 1:2:($3-$1):(0) with vectors nohead dt 3 lw 1.2 lc rgb 'gray60' notitle";
  for (std::size_t g = 0; g < roofline.groups.size(); ++g) {
    const std::string colour = kGroupColours[g % 8];
    plot += ", \\\n  '' index " + std::to_string(2 * g) +
            " using 1:2 with points pt 7 ps 1.6 lc rgb '" + colour + "' title " +
            gnuplot_string(roofline.groups[g] + " (observed)");
    plot += ", \\\n  '' index " + std::to_string(2 * g + 1) +
            " using 1:2 with points pt 6 ps 1.6 lw 1.5 lc rgb '" + colour + "' notitle";
  }
  plot +=
      ", \\\n  NaN with points pt 6 ps 1.6 lw 1.5 lc rgb 'gray30' title "
      "'open: algorithmic intensity'\n";
  write_text_file(directory / files.script, script + plot);
  return files;
}

}  // namespace swr::report
