// gnuplot: writing its input (data files and scripts), and running it where it is installed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace swr::report {

// Writing gnuplot's input: data files (whitespace-separated columns, one block per series, blocks
// separated by two blank lines so that `index N` picks one) and scripts that each render one PNG.
// Scripts use paths relative to the report directory: `cd DIR && gnuplot NAME.gp` renders one.

// The files of one chart, relative to the report directory.
struct ChartFiles {
  std::string title;
  std::string caption;  // what the chart shows, for index.html
  std::string png;      // "l2_misses_b8_h1_d128_f16_noncausal.png"
  std::string script;   // "...gp"
  std::string data;     // "...dat"
};

// A gnuplot string literal: double-quoted, with '"' and backslash escaped, newlines as \n.
std::string gnuplot_string(std::string_view text);

// "1.234e+06"-style text of a number, "NaN" (which gnuplot skips) when missing.
std::string data_number(std::optional<double> value);

// The terminal lines: pngcairo when this gnuplot has it, else the libgd png terminal; UTF-8,
// no enhanced-text markup (config keys have underscores), then `set output` to `png`.
std::string png_terminal(const std::string& png, int width, int height);

// Common look: light grid, key with a frame, thicker default lines.
std::string chart_style();

// Writes text to a file; throws std::runtime_error naming the path when it cannot.
void write_text_file(const std::filesystem::path& path, const std::string& text);

// Data file text: `comment` lines as '#', then each block's rows, blocks separated by two blank
// lines (gnuplot's `index`). A block with no rows gets one NaN row so that indices stay aligned.
std::string data_blocks(const std::vector<std::string>& comment,
                        const std::vector<std::vector<std::vector<std::optional<double>>>>& blocks);

// Rendering the report's scripts with gnuplot, when it is installed: found on $PATH (Debian:
// gnuplot-nox), run once per script in the report directory, its messages kept in gnuplot.log.

// The gnuplot executable on $PATH, or nullopt.
std::optional<std::filesystem::path> find_gnuplot();

struct RenderResult {
  bool ok = false;
  std::string message;  // why not, with the first line gnuplot printed
};

// Runs `gnuplot SCRIPT` with `directory` as the working directory, appending its output to
// directory/gnuplot.log; ok when it exits 0 and `png` exists and is not empty.
RenderResult run_gnuplot(const std::filesystem::path& gnuplot,
                         const std::filesystem::path& directory, const std::string& script,
                         const std::string& png);

}  // namespace swr::report
