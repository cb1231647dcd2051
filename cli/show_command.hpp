// `swr-tune show`: what the results database holds. Without a shape, one line per (GPU, problem):
// the best variant with its time and L2 figures, how many variants were measured and failed
// (--gpu and the other problem options filter; --family gemm: GEMM problems only). With --seq,
// every variant of that attention shape (the other options default as in `tune`), fastest first,
// failed ones last with their status; with --family gemm and --m/--n/--k or --size, every variant
// of that GEMM shape (show_gemm.hpp). The database is opened read-only.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/gemm_options.hpp"

namespace swr::cli {

struct ShowOptions {
  std::string gpu;
  std::string seq;
  std::string seq_kv;
  std::string batch;
  std::string heads;
  std::string head_dim;
  std::string dtype;
  bool causal = false;
  std::string database;
  bool database_given = false;
  bool json = false;
  GemmOptions gemm;  // --family, --m, --n, --k, --size
};

CLI::App* add_show_command(CLI::App& app, ShowOptions& options);
int run_show_command(const ShowOptions& options);

}  // namespace swr::cli
