#include "report/gnuplot_script.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace swr::report {

std::string gnuplot_string(std::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '\n') {
      quoted += "\\n";
    } else {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
  }
  return quoted + "\"";
}

std::string data_number(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return "NaN";
  char text[32];
  std::snprintf(text, sizeof(text), "%.10g", *value);
  return text;
}

std::string png_terminal(const std::string& png, int width, int height) {
  const std::string size = std::to_string(width) + "," + std::to_string(height);
  return "set encoding utf8\n"
         "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
         "  set terminal pngcairo size " +
         size +
         " font 'sans,11' noenhanced\n"
         "} else {\n"
         "  set terminal png size " +
         size +
         " noenhanced\n"
         "}\n"
         "set output " +
         gnuplot_string(png) + "\n";
}

std::string chart_style() {
  return "set grid xtics ytics mxtics mytics lc rgb '#dddddd' lw 1, lc rgb '#f0f0f0' lw 1\n"
         "set key box opaque samplen 3 spacing 1.1\n"
         "set border lw 1.2\n"
         "set datafile missing 'NaN'\n";
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string data_blocks(
    const std::vector<std::string>& comment,
    const std::vector<std::vector<std::vector<std::optional<double>>>>& blocks) {
  std::string text;
  for (const std::string& line : comment) text += "# " + line + "\n";
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (b > 0) text += "\n\n";
    if (blocks[b].empty()) {
      text += "NaN NaN\n";
      continue;
    }
    for (const std::vector<std::optional<double>>& row : blocks[b]) {
      for (std::size_t c = 0; c < row.size(); ++c) {
        text += (c > 0 ? " " : "") + data_number(row[c]);
      }
      text += "\n";
    }
  }
  return text;
}

}  // namespace swr::report
