// `swr-tune space`: the variants of the space that the target can run, and why the others were
// dropped.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/problem_options.hpp"

namespace swr::cli {

struct SpaceOptions {
  ProblemOptions problem;
  bool json = false;
  bool show_pruned = false;
};

CLI::App* add_space_command(CLI::App& app, SpaceOptions& options);
int run_space_command(const SpaceOptions& options);

}  // namespace swr::cli
