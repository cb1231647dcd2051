// Compiling a list of attention variants through the cubin cache with a live display: one line per
// variant as it completes, the NVRTC log of a failure, a summary at the end. Shared by compile,
// the tuning job and the model's register counts. What a target is, which variants of its space
// are compiled, and the settings every compiling command shares are here too.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include <optional>
#include <string>

#include "generator/attention_space.hpp"
#include "generator/parallel_compiler.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "swr/usage_error.hpp"

namespace swr {

// An attention problem on a GPU profile: what is compiled, modelled and tuned.
struct Target {
  AttentionProblem problem;
  GpuProfile gpu;
};

// How the compiling commands compile (parsed from --jobs, --cache-dir, --out, --limit, --json).
struct CompileSettings {
  int jobs = 0;
  std::filesystem::path cache_dir;
  std::optional<std::filesystem::path> out_dir;
  int limit = 0;  // 0: all
  bool json = false;
};

// The pruned space, restricted to `config_keys` when given (UsageError for an unknown key or one
// that does not fit the target).
AttentionSpace select_space(const Target& target, const std::vector<std::string>& config_keys);

struct CompileOutcome {
  std::vector<CompileResult> results;  // in the order of the configs given
  int failed = 0;
  int from_cache = 0;
  double seconds = 0;
  std::filesystem::path cache_dir;

  int succeeded() const { return static_cast<int>(results.size()) - failed; }
};

// One line per compiled kernel: counter, key, ok/FAILED, cubin size, registers, spills, shared
// memory, compile time, "cached"; a failure is followed by its NVRTC log, indented. Both families.
std::string compiled_kernel_line(const std::string& counter, const std::string& key,
                                 const CompiledKernel& kernel, int dynamic_shared_bytes,
                                 std::size_t key_width);
std::string compile_result_line(const std::string& counter, const CompileResult& result,
                                std::size_t key_width);

// The runnable configs of either family's space, the first `limit` of them when limit > 0. Throws
// UsageError when the target can run none of them (all pruned); `space_command` is the command
// that lists why.
template <class Space>
auto first_runnable_configs(const Space& space, int limit, const std::string& problem_key,
                            const std::string& gpu_name, const std::string& space_command) {
  if (space.configs.empty()) {
    std::string example = space.pruned.empty() ? "" : " (e.g. " + space.pruned.front().reason + ")";
    throw UsageError("problem '" + problem_key + "' has no variant that fits " + gpu_name +
                     example + ": allowed a problem with at least one runnable variant, see `" +
                     space_command + " --show-pruned`");
  }
  auto configs = space.configs;
  if (limit > 0 && static_cast<std::size_t>(limit) < configs.size()) configs.resize(limit);
  return configs;
}

// "registers per thread 96 to 168; 2 <unit> spill" over the kernels that compiled (nothing when
// none did), on stdout.
void print_register_range(const std::vector<const CompiledKernel*>& kernels, const char* unit);

// The runnable configs, the first `limit` of them when limit > 0. Throws UsageError when the
// target can run none of them (all pruned).
std::vector<AttentionConfig> variants_to_compile(const Target& target, const AttentionSpace& space,
                                                 int limit);

// Throws std::runtime_error when NVRTC cannot be loaded. With settings.json the per-variant lines
// are not printed (the caller prints outcome_json).
CompileOutcome compile_variants(const Target& target, const std::vector<AttentionConfig>& configs,
                                const CompileSettings& settings);

// "compiled 96 variants for gb10 (sm_121) in 3m12s: 96 ok, 0 failed (40 from cache)" and the
// register range, on stdout.
void print_compile_summary(const Target& target, const CompileOutcome& outcome);

nlohmann::json outcome_json(const Target& target, const CompileOutcome& outcome);

}  // namespace swr
