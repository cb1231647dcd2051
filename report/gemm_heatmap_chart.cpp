#include "report/gemm_heatmap_chart.hpp"

#include <algorithm>

namespace swr::report {

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
