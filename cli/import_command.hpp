// `swr-tune import`: merges other results databases and exports (their manifest.json) into a
// results database, so that what several machines tuned ends up in one file (attention and GEMM).
// Every measurement is kept: rows the target lacks are added, identical ones are skipped, none is
// changed; a shape measured on several machines is then answered by its best valid build (see
// README, "Runtime"). Every source is read and checked before anything is written.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace swr::cli {

struct ImportCommandOptions {
  std::vector<std::string> sources;
  std::string database;
  bool database_given = false;
  bool json = false;
};

CLI::App* add_import_command(CLI::App& app, ImportCommandOptions& options);
int run_import_command(const ImportCommandOptions& options);

}  // namespace swr::cli
