// `swr-tune report`'s work once its inputs are read: every chart's data and script, the PNGs when
// gnuplot is installed, and index.html with the tables. Without gnuplot the data and scripts are
// still written, and the page and the outcome say how to render them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/bench_results.hpp"
#include "report/gpu_results.hpp"

namespace swr::report {

struct ReportInputs {
  const GpuResults* results = nullptr;
  const BenchResults* bench = nullptr;  // optional
  std::string source_label;             // e.g. "/path/results.db"
  std::filesystem::path directory;      // created when missing
  // The gnuplot to render with; nullopt: write the scripts only.
  std::optional<std::filesystem::path> gnuplot;
};

struct ReportOutcome {
  std::filesystem::path index;        // directory/index.html
  std::vector<std::string> pngs;      // every chart's PNG name
  int rendered = 0;                   // PNGs gnuplot made
  std::vector<std::string> failures;  // one line per chart gnuplot could not render
  std::string render_hint;            // without gnuplot: the command that renders the charts
};

ReportOutcome build_report(const ReportInputs& inputs);

}  // namespace swr::report
