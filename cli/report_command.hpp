// `swr-tune report`: a report a person can look at, from the results database and/or
// `show --json` dumps (read into a temporary copy), and optionally a bench/peer_grid.py result: L2
// misses vs S (cyclic vs sawtooth, with the cold-miss line), throughput vs S for swr and each peer,
// the GEMM size x swizzle-stride heatmap, the roofline, and index.html with the tables (report/).
// PNGs are drawn by gnuplot when it is on PATH; without it the data and scripts are written and it
// says how to render. Every input is read and checked before anything is written.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace swr::cli {

struct ReportOptions {
  std::string gpu;
  std::string database;
  bool database_given = false;
  std::vector<std::string> show_json;
  std::string bench;
  std::string out;
};

CLI::App* add_report_command(CLI::App& app, ReportOptions& options);
int run_report_command(const ReportOptions& options);

}  // namespace swr::cli
