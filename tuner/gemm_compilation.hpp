// Compiling the GEMM variants of a problem: configs that differ only in their swizzle share one
// kernel binary (the swizzle is a launch argument), so each tile binary is compiled once through
// the cubin cache, with one line per binary, a summary at the end, and a JSON form. What the
// GEMM space of a target is, restricted to chosen configs, is here too (space, compile, tune).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generator/gemm_space.hpp"
#include "generator/parallel_compiler.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

// A GEMM problem on a GPU profile.
struct GemmTarget {
  GemmProblem problem;
  GpuProfile gpu;
};

// The pruned space, or exactly `wanted` when given (UsageError for a config that does not fit).
GemmSpace select_gemm_space(const GemmTarget& target, const std::vector<GemmConfig>& wanted);

// The runnable configs, the first `limit` of them when limit > 0. UsageError when there is none.
std::vector<GemmConfig> gemm_variants_to_compile(const GemmTarget& target, const GemmSpace& space,
                                                 int limit);

// One kernel binary and the variants (configs) that launch it with their own swizzle.
struct CompiledGemmBinary {
  std::string name;  // gemm_binary_name(): the config without its swizzle, and the dtype
  GemmBinary binary;
  std::vector<GemmConfig> variants;
};

struct GemmCompileOutcome {
  std::vector<CompiledGemmBinary> binaries;  // in the order of their first variant
  int failed = 0;
  int from_cache = 0;
  double seconds = 0;
  std::filesystem::path cache_dir;

  int succeeded() const { return static_cast<int>(binaries.size()) - failed; }
};

// Throws std::runtime_error when NVRTC cannot be loaded. One line per binary as
// compiled_kernel_line() writes it, unless settings.json.
GemmCompileOutcome compile_gemm_variants(const GemmTarget& target,
                                         const std::vector<GemmConfig>& configs,
                                         const CompileSettings& settings);

// "compiled 7 kernel binaries (77 variants) of 4096x4096x4096_f16 for h200 (sm_90a) in 1m02s: 7 ok,
// 0 failed (0 from cache)", the register range and the cache directory, on stdout.
void print_compile_summary(const GemmTarget& target, const GemmCompileOutcome& outcome);

nlohmann::json outcome_json(const GemmTarget& target, const GemmCompileOutcome& outcome);

}  // namespace swr
