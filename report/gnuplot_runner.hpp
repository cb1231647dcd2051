// Rendering the report's scripts with gnuplot, when it is installed: found on $PATH (Debian:
// gnuplot-nox), run once per script in the report directory, its messages kept in gnuplot.log.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace swr::report {

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
