#include "cli/variant_compilation.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "cli/json_forms.hpp"
#include "generator/cubin_cache.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "swr/usage_error.hpp"
#include "tuner/progress_display.hpp"
#include "tuner/text_format.hpp"

namespace swr::cli {

namespace {

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

int shared_bytes(const CompileResult& result) {
  return result.source.dynamic_shared_bytes + result.kernel.static_shared_bytes;
}

}  // namespace

std::string compile_result_line(const std::string& counter, const CompileResult& result,
                                std::size_t key_width) {
  const CompiledKernel& kernel = result.kernel;
  std::ostringstream line;
  line << counter << ' ' << padded(result.job.config.key(), key_width) << "  ";
  if (kernel.ok) {
    char numbers[160];
    std::snprintf(numbers, sizeof(numbers),
                  "ok      %6.1f KB  %3d regs  %4d B spill  %8s smem  %6s",
                  kernel.cubin.size() / 1024.0, kernel.registers, kernel.spill_bytes,
                  format_bytes(shared_bytes(result)).c_str(),
                  format_duration(kernel.compile_seconds).c_str());
    line << numbers;
  } else {
    line << "FAILED  " << format_duration(kernel.compile_seconds);
  }
  if (kernel.from_cache) line << "  cached";
  if (!kernel.ok) {
    // The variant's NVRTC log, indented under its line; the other variants go on.
    std::istringstream log(kernel.log.empty() ? std::string("(NVRTC gave no log)") : kernel.log);
    for (std::string log_line; std::getline(log, log_line);) line << "\n    " << log_line;
  }
  return line.str();
}

std::vector<AttentionConfig> variants_to_compile(const Target& target, const AttentionSpace& space,
                                                 int limit) {
  if (space.configs.empty()) {
    std::string example = space.pruned.empty() ? "" : " (e.g. " + space.pruned.front().reason + ")";
    throw UsageError("problem '" + target.problem.key() + "' has no variant that fits " +
                     target.gpu.name + example +
                     ": allowed a problem with at least one runnable variant, see `swr-tune space "
                     "--show-pruned`");
  }
  std::vector<AttentionConfig> configs = space.configs;
  if (limit > 0 && static_cast<std::size_t>(limit) < configs.size()) configs.resize(limit);
  return configs;
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

void print_compile_summary(const Target& target, const CompileOutcome& outcome) {
  int fewest_registers = 0, most_registers = 0, spilling = 0;
  bool first = true;
  for (const CompileResult& result : outcome.results) {
    if (!result.kernel.ok) continue;
    if (first || result.kernel.registers < fewest_registers)
      fewest_registers = result.kernel.registers;
    if (first || result.kernel.registers > most_registers) most_registers = result.kernel.registers;
    if (result.kernel.spill_bytes > 0) ++spilling;
    first = false;
  }
  std::printf("compiled %zu variants of %s for %s (%s) in %s: %d ok, %d failed (%d from cache)\n",
              outcome.results.size(), target.problem.key().c_str(), target.gpu.name.c_str(),
              target.gpu.arch.c_str(), format_duration(outcome.seconds).c_str(),
              outcome.succeeded(), outcome.failed, outcome.from_cache);
  if (!first) {
    std::printf("registers per thread %d to %d; %d variant(s) spill\n", fewest_registers,
                most_registers, spilling);
  }
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
    };
    if (!result.kernel.ok) entry["log"] = result.kernel.log;
    results.push_back(std::move(entry));
  }
  return {
      {"problem", problem_json(target.problem)},
      {"gpu", gpu_json(target.gpu)},
      {"arch", target.gpu.arch},
      {"cache_dir", outcome.cache_dir.string()},
      {"seconds", outcome.seconds},
      {"ok", outcome.succeeded()},
      {"failed", outcome.failed},
      {"results", std::move(results)},
  };
}

}  // namespace swr::cli
