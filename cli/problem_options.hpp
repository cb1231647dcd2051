// The options every problem-taking command shares (--gpu, --seq, ..., --config), kept as text so
// that every bad value gets the same one-line message, and their conversion into a target.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "generator/attention_space.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::cli {

struct ProblemOptions {
  std::string gpu;
  std::string seq;
  std::string seq_kv;
  std::string batch = "8";
  std::string heads = "1";
  std::string head_dim = "64";
  std::string dtype = "f16";
  bool causal = false;
  std::vector<std::string> config_keys;  // --config: restrict to these variants
};

void add_problem_options(CLI::App& command, ProblemOptions& options);

// Parses a positive integer option value; throws UsageError "bad --name 'text': allowed ...".
int parse_positive(const std::string& text, const std::string& option_name);

struct Target {
  AttentionProblem problem;
  GpuProfile gpu;
};

// Checks every value (UsageError on the first bad one) before resolving the GPU, so that bad
// input never touches the driver or the disk. "auto" without a device throws NoDeviceError.
Target resolve_target(const ProblemOptions& options);

// The pruned space, restricted to --config keys when given (UsageError for an unknown key or one
// that does not fit the target).
AttentionSpace select_space(const Target& target, const std::vector<std::string>& config_keys);

}  // namespace swr::cli
