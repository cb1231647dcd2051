#include "report/gnuplot.hpp"

#include <unistd.h>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "support/child_process.hpp"

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

namespace {

std::string last_error_line(const std::filesystem::path& log, std::streamoff from) {
  std::ifstream in(log);
  in.seekg(from);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t^") != std::string::npos) last = line;
  }
  return last;
}

}  // namespace

std::optional<std::filesystem::path> find_gnuplot() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream directories(path);
  for (std::string directory; std::getline(directories, directory, ':');) {
    if (directory.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(directory) / "gnuplot";
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

RenderResult run_gnuplot(const std::filesystem::path& gnuplot,
                         const std::filesystem::path& directory, const std::string& script,
                         const std::string& png) {
  const std::filesystem::path log = directory / "gnuplot.log";
  std::error_code ignored;
  const std::streamoff log_start =
      std::filesystem::exists(log) ? std::filesystem::file_size(log, ignored) : 0;
  std::filesystem::remove(directory / png, ignored);  // a stale image must not pass for a new one

  ChildExit exit;
  try {
    ProgramFiles files;
    files.stdout_file = log;
    files.append = true;
    files.working_directory = directory;
    exit = run_program({gnuplot.string(), script}, files);
  } catch (const std::runtime_error&) {
    return {false, "cannot start " + gnuplot.string()};
  }
  const bool exited_ok = !exit.signaled && exit.code == 0;
  const std::filesystem::path image = directory / png;
  if (exited_ok && std::filesystem::exists(image, ignored) &&
      std::filesystem::file_size(image, ignored) > 0) {
    return {true, ""};
  }
  const std::string said = last_error_line(log, log_start);
  return {false, "gnuplot " + script + " made no " + png +
                     (said.empty() ? "" : " (gnuplot said: " + said + ")") + ", see " +
                     log.string()};
}

}  // namespace swr::report
