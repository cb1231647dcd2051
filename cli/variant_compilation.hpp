// Compiling a list of variants through the cubin cache with a live display: one line per variant
// as it completes, the NVRTC log of a failure, a summary at the end. Shared by compile and tune.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/compile_options.hpp"
#include "cli/problem_options.hpp"
#include "generator/parallel_compiler.hpp"

namespace swr::cli {

struct CompileOutcome {
  std::vector<CompileResult> results;  // in the order of the configs given
  int failed = 0;
  int from_cache = 0;
  double seconds = 0;
  std::filesystem::path cache_dir;

  int succeeded() const { return static_cast<int>(results.size()) - failed; }
};

// One line per variant: counter, key, ok/FAILED, cubin size, registers, spills, shared memory,
// compile time, "cached"; a failure is followed by its NVRTC log, indented.
std::string compile_result_line(const std::string& counter, const CompileResult& result,
                                std::size_t key_width);

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

}  // namespace swr::cli
