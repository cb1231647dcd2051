#include "cli/problem_options.hpp"

#include <algorithm>
#include <charconv>
#include <climits>

#include "swr/usage_error.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr::cli {

namespace {

std::string supported_head_dims() {
  std::string text;
  for (int dim : kSupportedHeadDims) text += (text.empty() ? "" : ", ") + std::to_string(dim);
  return text;
}

void require(const std::string& value, const std::string& option_name, const std::string& allowed) {
  if (value.empty()) throw UsageError("missing " + option_name + ": allowed " + allowed);
}

}  // namespace

void add_problem_options(CLI::App& command, ProblemOptions& options) {
  command.add_option("--gpu", options.gpu, "Target GPU: " + gpu_profile_names())->type_name("NAME");
  command.add_option("--seq", options.seq, "Query sequence length (rows per head)")->type_name("S");
  command.add_option("--seq-kv", options.seq_kv, "Key/value sequence length (default: --seq)")
      ->type_name("S");
  command.add_option("--batch", options.batch, "Batch size")->type_name("B")->capture_default_str();
  command.add_option("--heads", options.heads, "Attention heads")
      ->type_name("H")
      ->capture_default_str();
  command.add_option("--head-dim", options.head_dim, "Head dimension: " + supported_head_dims())
      ->type_name("D")
      ->capture_default_str();
  command.add_option("--dtype", options.dtype, "Element type: f16, bf16")
      ->type_name("TYPE")
      ->capture_default_str();
  command.add_flag("--causal", options.causal, "Causal mask (query row i sees keys j <= i)");
  command
      .add_option("--config", options.config_keys,
                  "Only these variants (config keys as `swr-tune space` lists them); repeatable")
      ->type_name("KEY");
}

int parse_positive(const std::string& text, const std::string& option_name) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || value <= 0 || value > INT_MAX) {
    throw UsageError("bad " + option_name + " '" + text + "': allowed a positive integer (1 to " +
                     std::to_string(INT_MAX) + ")");
  }
  return static_cast<int>(value);
}

Target resolve_target(const ProblemOptions& options) {
  require(options.gpu, "--gpu", gpu_profile_names());
  if (options.gpu != "auto" && !find_gpu_profile(options.gpu)) {
    resolve_gpu(options.gpu);  // throws the "unknown GPU" UsageError
  }
  require(options.seq, "--seq", "a positive integer (query rows per head)");

  AttentionProblem problem;
  problem.seq_q = parse_positive(options.seq, "--seq");
  problem.seq_kv =
      options.seq_kv.empty() ? problem.seq_q : parse_positive(options.seq_kv, "--seq-kv");
  problem.batch = parse_positive(options.batch, "--batch");
  problem.heads = parse_positive(options.heads, "--heads");
  problem.head_dim = parse_positive(options.head_dim, "--head-dim");
  if (std::find(std::begin(kSupportedHeadDims), std::end(kSupportedHeadDims), problem.head_dim) ==
      std::end(kSupportedHeadDims)) {
    throw UsageError("unsupported head dim '" + options.head_dim + "': allowed " +
                     supported_head_dims());
  }
  const auto dtype = parse_data_type(options.dtype);
  if (!dtype) throw UsageError("unsupported dtype '" + options.dtype + "': allowed f16, bf16");
  problem.dtype = *dtype;
  problem.causal = options.causal;
  problem.validate();  // whatever else the problem itself refuses (e.g. tensors too large)

  for (const std::string& key : options.config_keys) {
    if (!AttentionConfig::from_key(key)) {
      throw UsageError("bad --config '" + key +
                       "': allowed a config key as `swr-tune space` lists it, e.g. "
                       "m128n64w8s2-sawtooth-static-groups4");
    }
  }
  return Target{problem, resolve_gpu(options.gpu)};
}

AttentionSpace select_space(const Target& target, const std::vector<std::string>& config_keys) {
  AttentionSpace space = build_attention_space(target.problem, target.gpu);
  if (config_keys.empty()) return space;

  AttentionSpace selected;
  for (const std::string& key : config_keys) {
    const AttentionConfig wanted = *AttentionConfig::from_key(key);
    auto runnable = std::find(space.configs.begin(), space.configs.end(), wanted);
    if (runnable != space.configs.end()) {
      if (std::find(selected.configs.begin(), selected.configs.end(), wanted) ==
          selected.configs.end()) {
        selected.configs.push_back(wanted);
      }
      continue;
    }
    auto pruned = std::find_if(space.pruned.begin(), space.pruned.end(),
                               [&](const PrunedConfig& p) { return p.config == wanted; });
    if (pruned != space.pruned.end()) {
      throw UsageError("config '" + key + "' does not fit " + target.gpu.name + " (" +
                       pruned->reason + "): allowed the keys `swr-tune space` lists");
    }
    throw UsageError("config '" + key + "' is not in the space of " + target.problem.key() +
                     ": allowed the keys `swr-tune space` lists");
  }
  return selected;
}

}  // namespace swr::cli
