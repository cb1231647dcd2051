// The main job, `swr-tune --gpu G --seq S` (or `swr-tune tune ...`): compile the variant space for
// the target, then time it on the device. Timing needs the named GPU; without it the compiled
// space is what this command delivers, and it says so.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/compile_options.hpp"
#include "cli/gemm_options.hpp"
#include "cli/problem_options.hpp"
#include "cli/tuning_options.hpp"

namespace swr::cli {

struct TuneOptions {
  ProblemOptions problem;
  CompileOptions compile;
  TuningOptions tuning;  // --db, --time-budget, --both, --retune
  GemmOptions gemm;      // --family gemm, --m, --n, --k, --size, --sweep
};

// Adds the options to `command` (the root app or the `tune` subcommand).
void add_tune_options(CLI::App& command, TuneOptions& options);
CLI::App* add_tune_command(CLI::App& app, TuneOptions& options);
int run_tune_command(const TuneOptions& options);

}  // namespace swr::cli
