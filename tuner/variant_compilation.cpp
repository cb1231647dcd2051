#include "tuner/variant_compilation.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "generator/cubin_cache.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "swr/usage_error.hpp"
#include "tuner/json_forms.hpp"
#include "tuner/progress_display.hpp"
#include "tuner/text_format.hpp"

namespace swr {

// The tuner's display helpers still live in the swr::cli namespace.

namespace {

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

}  // namespace

std::string compiled_kernel_line(const std::string& counter, const std::string& key,
                                 const CompiledKernel& kernel, int dynamic_shared_bytes,
                                 std::size_t key_width) {
  std::ostringstream line;
  line << counter << ' ' << padded(key, key_width) << "  ";
  if (kernel.ok) {
    char numbers[160];
    std::snprintf(numbers, sizeof(numbers),
                  "ok      %6.1f KB  %3d regs  %4d B spill  %8s smem  %6s",
                  kernel.cubin.size() / 1024.0, kernel.registers, kernel.spill_bytes,
                  format_bytes(dynamic_shared_bytes + kernel.static_shared_bytes).c_str(),
                  format_duration(kernel.compile_seconds).c_str());
    line << numbers;
  } else {
    line << "FAILED  " << format_duration(kernel.compile_seconds);
  }
  if (kernel.from_cache) line << "  cached";
  if (kernel.ok) {
    if (const std::string why = ptxas_wgmma_serialization(kernel.log); !why.empty()) {
      line << "\n    ptxas serialized its wgmma (" << why << ")";
    }
  } else {
    // The variant's NVRTC log, indented under its line; the other variants go on.
    std::istringstream log(kernel.log.empty() ? std::string("(NVRTC gave no log)") : kernel.log);
    for (std::string log_line; std::getline(log, log_line);) line << "\n    " << log_line;
  }
  return line.str();
}

std::string compile_result_line(const std::string& counter, const CompileResult& result,
                                std::size_t key_width) {
  return compiled_kernel_line(counter, result.job.config.key(), result.kernel,
                              result.source.dynamic_shared_bytes, key_width);
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
    if (std::string why = instruction_path_problem(target.gpu, wanted.path); !why.empty()) {
      throw UsageError("config '" + key + "': " + why);
    }
    throw UsageError("config '" + key + "' is not in the space of " + target.problem.key() +
                     ": allowed the keys `swr-tune space` lists");
  }
  return selected;
}

std::vector<AttentionConfig> variants_to_compile(const Target& target, const AttentionSpace& space,
                                                 int limit) {
  return first_runnable_configs(space, limit, target.problem.key(), target.gpu.name,
                                "swr-tune space");
}

CompileOutcome compile_variants(const Target& target, const std::vector<AttentionConfig>& configs,
                                const CompileSettings& settings) {
  const NvrtcCompiler compiler;
  const CubinCache cache(settings.cache_dir);

  std::vector<CompileJob> jobs;
  std::size_t key_width = 0;
  for (const AttentionConfig& config : configs) {
    jobs.push_back(CompileJob{target.problem, config, target.gpu.arch});
    key_width = std::max(key_width, config.key().size());
  }

  CompileOutcome outcome;
  outcome.cache_dir = cache.directory();
  std::map<std::string, CompileResult> by_key;
  ProgressDisplay display("compiling for " + target.gpu.arch, static_cast<int>(jobs.size()),
                          settings.json);
  compile_in_parallel(compiler, &cache, jobs, settings.jobs, [&](const CompileResult& result) {
    if (!result.kernel.ok) ++outcome.failed;
    if (result.kernel.from_cache) ++outcome.from_cache;
    by_key.emplace(result.job.config.key(), result);
    display.item_done(compile_result_line(display.next_counter(), result, key_width));
  });
  display.finish();
  outcome.seconds = display.elapsed_seconds();
  for (const AttentionConfig& config : configs) {
    auto found = by_key.find(config.key());
    if (found != by_key.end()) outcome.results.push_back(std::move(found->second));
  }
  return outcome;
}

void print_register_range(const std::vector<const CompiledKernel*>& kernels, const char* unit) {
  int fewest_registers = 0, most_registers = 0, spilling = 0, serialized = 0;
  bool first = true;
  for (const CompiledKernel* kernel : kernels) {
    if (!kernel->ok) continue;
    if (first || kernel->registers < fewest_registers) fewest_registers = kernel->registers;
    if (first || kernel->registers > most_registers) most_registers = kernel->registers;
    if (kernel->spill_bytes > 0) ++spilling;
    if (!ptxas_wgmma_serialization(kernel->log).empty()) ++serialized;
    first = false;
  }
  if (!first) {
    std::printf("registers per thread %d to %d; %d %s spill", fewest_registers, most_registers,
                spilling, unit);
    if (serialized > 0) std::printf("; %d with their wgmma serialized by ptxas", serialized);
    std::printf("\n");
  }
}

void print_compile_summary(const Target& target, const CompileOutcome& outcome) {
  std::printf("compiled %zu variants of %s for %s (%s) in %s: %d ok, %d failed (%d from cache)\n",
              outcome.results.size(), target.problem.key().c_str(), target.gpu.name.c_str(),
              target.gpu.arch.c_str(), format_duration(outcome.seconds).c_str(),
              outcome.succeeded(), outcome.failed, outcome.from_cache);
  std::vector<const CompiledKernel*> kernels;
  for (const CompileResult& result : outcome.results) kernels.push_back(&result.kernel);
  print_register_range(kernels, "variant(s)");
  if (outcome.failed > 0) {
    std::printf("failed:");
    for (const CompileResult& result : outcome.results) {
      if (!result.kernel.ok) std::printf(" %s", result.job.config.key().c_str());
    }
    std::printf("\n");
  }
  std::printf("cubins cached in %s\n", outcome.cache_dir.string().c_str());
  std::fflush(stdout);
}

nlohmann::json outcome_json(const Target& target, const CompileOutcome& outcome) {
  nlohmann::json results = nlohmann::json::array();
  for (const CompileResult& result : outcome.results) {
    nlohmann::json entry = {
        {"key", result.job.config.key()},
        {"config", result.job.config.to_json()},
        {"ok", result.kernel.ok},
        {"cubin_bytes", result.kernel.cubin.size()},
        {"registers", result.kernel.registers},
        {"spill_bytes", result.kernel.spill_bytes},
        {"static_shared_bytes", result.kernel.static_shared_bytes},
        {"dynamic_shared_bytes", result.source.dynamic_shared_bytes},
        {"threads", result.source.threads_per_block},
        {"seconds", result.kernel.compile_seconds},
        {"cached", result.kernel.from_cache},
        {"wgmma_serialized", ptxas_wgmma_serialization(result.kernel.log)},
    };
    if (!result.kernel.ok) entry["log"] = result.kernel.log;
    results.push_back(std::move(entry));
  }
  return compile_outcome_json(target, outcome, std::move(results));
}

}  // namespace swr
