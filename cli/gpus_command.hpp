// `swr-tune gpus`: the built-in GPU profiles and the device present on this machine, if any.
#pragma once

#include <CLI/CLI.hpp>

namespace swr::cli {

struct GpusOptions {
  bool json = false;
};

CLI::App* add_gpus_command(CLI::App& app, GpusOptions& options);
int run_gpus_command(const GpusOptions& options);

}  // namespace swr::cli
