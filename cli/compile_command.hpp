// `swr-tune compile`: compile the pruned space for the target with NVRTC, on several threads,
// through the cubin cache; report cubin size, registers, spills and shared memory per variant.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/compile_options.hpp"
#include "cli/problem_options.hpp"

namespace swr::cli {

struct CompileCommandOptions {
  ProblemOptions problem;
  CompileOptions compile;
};

CLI::App* add_compile_command(CLI::App& app, CompileCommandOptions& options);
// 0 when every variant compiled, 1 when any failed.
int run_compile_command(const CompileCommandOptions& options);

}  // namespace swr::cli
