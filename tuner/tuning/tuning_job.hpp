// The main job of swr-tune (`swr-tune [tune] --gpu G --seq S ...`) from parsed options to exit
// code: check every value and the database path before any GPU work, then tune on the present
// device when it is the named GPU, or compile only (and say why) when it is not.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tuner/cli/compile_options.hpp"
#include "tuner/cli/problem_options.hpp"

namespace swr::cli {

// The options tuning adds to the problem and compile options (--limit comes from those).
struct TuningOptions {
  std::string database;  // --db
  bool database_given = false;
  std::string time_budget;  // --time-budget SEC
  bool both = false;        // causal and non-causal
  bool retune = false;
  bool plant_fault = false;  // hidden, for tests: add a variant that faults on purpose
};

void add_tuning_options(CLI::App& command, TuningOptions& options);

// 0 when done (failed variants are results too), 130 after Ctrl-C; throws UsageError for bad
// input before touching the device or the database.
int run_tuning_job(const ProblemOptions& problem, const CompileOptions& compile,
                   const TuningOptions& tuning);

}  // namespace swr::cli
