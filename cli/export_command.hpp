// `swr-tune export`: the best variant of every shape tuned on a GPU, attention and GEMM, compiled
// for its arch, as DIR/<cubin>.cubin plus DIR/manifest.json, from which swr::Attention and
// swr::Gemm run without the database or NVRTC. Bad input (exit 2) and failed compiles (exit 1)
// write nothing.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace swr::cli {

struct ExportCommandOptions {
  std::string gpu;
  std::string database;
  bool database_given = false;
  std::string out_dir;
  std::string cache_dir;
  bool allow_changed_source = false;
  bool json = false;
};

CLI::App* add_export_command(CLI::App& app, ExportCommandOptions& options);
int run_export_command(const ExportCommandOptions& options);

}  // namespace swr::cli
