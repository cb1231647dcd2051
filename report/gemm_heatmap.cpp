#include "report/gemm_heatmap.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace swr::report {

namespace {

std::optional<long long> integer_field(const nlohmann::json& json, const char* name) {
  if (!json.is_object() || !json.contains(name) || !json[name].is_number_integer()) {
    return std::nullopt;
  }
  return json[name].get<long long>();
}

std::optional<double> achieved_tflops(const db::MeasurementRecord& record, const GemmSize& size) {
  if (record.tflops) return record.tflops;
  if (!record.median_ms) return std::nullopt;
  return 2.0 * size.m * size.n * size.k / (*record.median_ms * 1e9);
}

}  // namespace

std::string GemmSize::label() const {
  if (m == n && n == k) return std::to_string(m) + "³";
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::vector<GemmHeatmap> gemm_heatmaps(const GpuResults& results) {
  using SizeKey = std::tuple<long long, long long, long long, long long>;  // m*n*k, m, n, k
  // dtype -> size -> stride -> best TFLOP/s
  std::map<std::string, std::map<SizeKey, std::map<long long, double>>> cells;
  std::map<std::string, std::map<SizeKey, double>> cublas;  // fastest cuBLAS time seen, ms
  for (const ProblemResults* problem : results.of_family("gemm")) {
    const nlohmann::json& json = problem->problem.json;
    const auto m = integer_field(json, "m"), n = integer_field(json, "n"),
               k = integer_field(json, "k");
    if (!m || !n || !k) continue;
    const std::string dtype = json.value("dtype", std::string("?"));
    const GemmSize size{*m, *n, *k};
    for (const db::StoredMeasurement& stored : problem->measurements) {
      if (stored.record.status != db::MeasurementStatus::ok) continue;
      const nlohmann::json& method = stored.record.method;
      if (method.contains("cublas_median_ms") && method["cublas_median_ms"].is_number()) {
        const double ms = method["cublas_median_ms"].get<double>();
        auto [entry, added] = cublas[dtype].emplace(SizeKey{*m * *n * *k, *m, *n, *k}, ms);
        if (!added) entry->second = std::min(entry->second, ms);
      }
      const std::optional<long long> stride = integer_field(stored.config_json, "swizzle_stride");
      const std::optional<double> tflops = achieved_tflops(stored.record, size);
      if (!stride || !tflops) continue;
      double& cell = cells[dtype][{*m * *n * *k, *m, *n, *k}][*stride];
      cell = std::max(cell, *tflops);
    }
  }
  std::vector<GemmHeatmap> heatmaps;
  for (const auto& [dtype, by_size] : cells) {
    GemmHeatmap heatmap;
    heatmap.dtype = dtype;
    heatmap.stem = "gemm_swizzle_" + dtype;
    std::set<long long> strides;
    for (const auto& [size, by_stride] : by_size) {
      for (const auto& [stride, tflops] : by_stride) strides.insert(stride);
    }
    heatmap.strides.assign(strides.begin(), strides.end());
    for (const auto& [size, by_stride] : by_size) {
      heatmap.sizes.push_back({std::get<1>(size), std::get<2>(size), std::get<3>(size)});
      std::vector<std::optional<double>> row;
      std::optional<std::size_t> best;
      for (std::size_t column = 0; column < heatmap.strides.size(); ++column) {
        const auto found = by_stride.find(heatmap.strides[column]);
        row.push_back(found == by_stride.end() ? std::nullopt
                                               : std::optional<double>(found->second));
        if (row.back() && (!best || *row.back() > *row[*best])) best = column;
      }
      heatmap.tflops.push_back(std::move(row));
      heatmap.best_column.push_back(best);
      const auto baseline = cublas[dtype].find(size);
      heatmap.cublas_tflops.push_back(
          baseline == cublas[dtype].end() || baseline->second <= 0
              ? std::nullopt
              : std::optional<double>(2.0 * std::get<1>(size) * std::get<2>(size) *
                                      std::get<3>(size) / (baseline->second * 1e9)));
    }
    if (!heatmap.sizes.empty()) heatmaps.push_back(std::move(heatmap));
  }
  return heatmaps;
}

ChartFiles write_gemm_heatmap_chart(const GemmHeatmap& heatmap, const std::string& gpu_label,
                                    const std::filesystem::path& directory) {
  ChartFiles files;
  files.title = "GEMM: matrix size vs swizzle stride (" + heatmap.dtype + ")";
  files.png = heatmap.stem + ".png";
  files.script = heatmap.stem + ".gp";
  files.data = heatmap.stem + ".dat";
  files.caption =
      "TFLOP/s (2·M·N·K over the median time) of the fastest variant measured with each block "
      "swizzle stride (stride 0: plain row-major tile order; any tile and swizzle axis); the "
      "best stride of each size is framed in blue, blank cells were not measured.";

  std::vector<std::vector<std::optional<double>>> cells, best;
  for (std::size_t row = 0; row < heatmap.sizes.size(); ++row) {
    for (std::size_t column = 0; column < heatmap.strides.size(); ++column) {
      const std::optional<double> value = heatmap.tflops[row][column];
      if (!value) continue;
      cells.push_back({static_cast<double>(column), static_cast<double>(row), value});
      if (heatmap.best_column[row] == column) best.push_back(cells.back());
    }
  }
  write_text_file(
      directory / files.data,
      data_blocks({files.title + " on " + gpu_label, "columns: stride index, size index, TFLOP/s",
                   "index 0: every measured cell; index 1: best stride per size"},
                  {cells, best}));

  std::string xtics = "set xtics (", ytics = "set ytics (";
  for (std::size_t column = 0; column < heatmap.strides.size(); ++column) {
    xtics += (column ? ", " : "") + gnuplot_string(std::to_string(heatmap.strides[column])) + " " +
             std::to_string(column);
  }
  for (std::size_t row = 0; row < heatmap.sizes.size(); ++row) {
    ytics +=
        (row ? ", " : "") + gnuplot_string(heatmap.sizes[row].label()) + " " + std::to_string(row);
  }
  const int columns = static_cast<int>(heatmap.strides.size());
  const int rows = static_cast<int>(heatmap.sizes.size());
  std::string script =
      png_terminal(files.png, std::max(820, 240 + 90 * columns), std::max(520, 200 + 60 * rows));
  script += "set datafile missing 'NaN'\n";
  script += "set title " +
            gnuplot_string("GEMM TFLOP/s by matrix size and block-swizzle stride, " +
                           heatmap.dtype + ", on " + gpu_label +
                           "\n(best variant per cell; blue frame: best stride of the size)") +
            "\n";
  script += "set xlabel 'swizzle stride (elements of the swizzled axis; 0 = no swizzle)'\n";
  script += "set ylabel 'matrix size M×N×K'\n";
  script += "set cblabel 'TFLOP/s'\n";
  script += xtics + ") scale 0\n" + ytics + ") scale 0\n";
  script += "set xrange [-0.5:" + std::to_string(columns) + "-0.5]\n";
  script += "set yrange [-0.5:" + std::to_string(rows) + "-0.5]\n";
  script += "set palette defined (0 '#fde725', 0.5 '#5ec962', 1 '#21918c')\n";
  script += "unset key\nset tics out nomirror\n";
  script += "plot " + gnuplot_string(files.data) +
            " index 0 using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette, "
            "\\\n  '' index 0 using 1:2:(sprintf('%.0f', $3)) with labels font ',10' tc rgb "
            "'black', \\\n  '' index 1 using 1:2:(0.46):(0.46) with boxxyerror fs empty border "
            "lc rgb '#1f3fbf' lw 3\n";
  write_text_file(directory / files.script, script);
  return files;
}

}  // namespace swr::report
