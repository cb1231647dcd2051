// `swr-tune model`: what the L2 model predicts for each variant on a GPU profile, present or not:
// L2 misses, hit rate, DRAM bytes and a roofline time, cyclic and sawtooth twins side by side.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/problem_options.hpp"

namespace swr::cli {

struct ModelOptions {
  ProblemOptions problem;
  bool json = false;
  bool estimate_registers = false;  // skip compiling; CTAs per SM from estimated registers
  std::string jobs;                 // compile threads, empty: hardware threads
};

CLI::App* add_model_command(CLI::App& app, ModelOptions& options);
int run_model_command(const ModelOptions& options);

}  // namespace swr::cli
