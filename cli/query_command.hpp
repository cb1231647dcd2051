// `swr-tune query`: what the runtime would choose for a shape on a GPU, from a results database
// (--db, default as for `show`) or an export (--export DIR): the variant with its measured
// figures, and whether it was tuned for this very shape (exact) or for the nearest tuned one
// (which one, at what distance), or that nothing can serve it (none, with why; exit code 0).
// --family gemm asks for a GEMM shape (--m --n --k, or --size) instead of an attention one.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/gemm_options.hpp"

namespace swr::cli {

struct QueryOptions {
  std::string gpu;
  std::string seq;
  std::string seq_kv;
  std::string batch = "8";
  std::string heads = "1";
  std::string head_dim = "64";
  std::string dtype = "f16";
  bool causal = false;
  GemmOptions gemm;                                  // --family, --m, --n, --k, --size
  std::vector<std::string> attention_options_given;  // to refuse them with --family gemm
  std::string database;
  bool database_given = false;
  std::string export_dir;
  bool json = false;
};

CLI::App* add_query_command(CLI::App& app, QueryOptions& options);
int run_query_command(const QueryOptions& options);

}  // namespace swr::cli
