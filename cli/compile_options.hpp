// Options of the commands that compile (compile, tune): parallelism, cache, output, limit.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>

namespace swr::cli {

struct CompileOptions {
  std::string jobs;       // empty: hardware threads
  std::string cache_dir;  // empty: CubinCache::default_directory()
  std::string out_dir;    // empty: no cubin export
  std::string limit;      // empty: the whole space
  bool json = false;
};

enum class CompileCommandKind { compile, tune };

// `tune` takes no --out and --json: its output is the tuning result.
void add_compile_options(CLI::App& command, CompileOptions& options, CompileCommandKind kind);

struct CompileSettings {
  int jobs = 0;
  std::filesystem::path cache_dir;
  std::optional<std::filesystem::path> out_dir;
  int limit = 0;  // 0: all
  bool json = false;
};

// Throws UsageError for a bad value; touches nothing on disk.
CompileSettings parse_compile_options(const CompileOptions& options);

}  // namespace swr::cli
