#include "cli/compile_options.hpp"

#include <algorithm>

#include "cli/problem_options.hpp"
#include "generator/cubin_cache.hpp"
#include "support/parallel_for.hpp"
#include "swr/usage_error.hpp"

namespace swr::cli {

namespace {

// A directory option must not name an existing non-directory (we would fail half-way through).
std::filesystem::path directory_option(const std::string& text, const std::string& option_name) {
  std::error_code error;
  if (text.empty() ||
      (std::filesystem::exists(text, error) && !std::filesystem::is_directory(text, error))) {
    throw UsageError("bad " + option_name + " '" + text +
                     "': allowed a directory (existing or to be created)");
  }
  return text;
}

}  // namespace

void add_compile_options(CLI::App& command, CompileOptions& options, CompileCommandKind kind) {
  command.add_option("--jobs,-j", options.jobs, "Compiler threads (default: hardware threads)")
      ->type_name("N");
  command
      .add_option("--cache-dir", options.cache_dir,
                  "Cubin cache (default: $SWR_CACHE_DIR, else ~/.cache/swr/cubins)")
      ->type_name("DIR");
  command
      .add_option("--limit", options.limit,
                  kind == CompileCommandKind::tune
                      ? "Measure at most N variants not yet in the database (then run again)"
                      : "Compile only the first N variants of the space")
      ->type_name("N");
  if (kind == CompileCommandKind::compile) {
    command
        .add_option("--out", options.out_dir,
                    "Write DIR/<config key>.cubin and DIR/kernels.json (after all compiled)")
        ->type_name("DIR");
    command.add_flag("--json", options.json, "Print the results as JSON instead of lines");
  }
}

CompileSettings parse_compile_options(const CompileOptions& options) {
  CompileSettings settings;
  if (options.jobs.empty()) {
    settings.jobs = static_cast<int>(hardware_threads());
  } else {
    settings.jobs = parse_positive(options.jobs, "--jobs");
  }
  if (!options.limit.empty()) settings.limit = parse_positive(options.limit, "--limit");
  settings.cache_dir = options.cache_dir.empty()
                           ? CubinCache::default_directory()
                           : directory_option(options.cache_dir, "--cache-dir");
  if (!options.out_dir.empty()) settings.out_dir = directory_option(options.out_dir, "--out");
  settings.json = options.json;
  return settings;
}

}  // namespace swr::cli
