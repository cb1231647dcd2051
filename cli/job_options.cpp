#include "cli/job_options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <thread>

#include "cli/problem_options.hpp"
#include "db/database_location.hpp"
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
                  std::string("Cubin cache (") + kCubinCacheDefaultHelp + ")")
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

void add_tuning_options(CLI::App& command, TuningOptions& options) {
  add_database_option(command, options.database, options.database_given);
  command
      .add_option("--time-budget", options.time_budget,
                  "Start no new variant after SEC seconds (the same command resumes)")
      ->type_name("SEC");
  command.add_flag("--both", options.both, "Tune the causal and the non-causal shape");
  command.add_flag("--retune", options.retune, "Measure again the variants already measured");
  command
      .add_option("--devices", options.devices,
                  "Measure on these devices of the --gpu kind, one worker each (all, or indexes "
                  "such as 0,2,5; default: $SWR_DEVICE, else 0)")
      ->type_name("all|LIST");
  command.add_flag("--no-wait", options.no_wait,
                   "Fail instead of waiting when another tuner is measuring on a device");
  command
      .add_option("--plan", options.plan,
                  "Tune the problems of both families a plan file (JSON) lists, instead of one "
                  "shape")
      ->type_name("FILE");
  command
      .add_option("--shard", options.shard,
                  "Tune shard I of N of the work (0 <= I < N), e.g. "
                  "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; merge with `import`")
      ->type_name("I/N");
  command
      .add_option("--model-top", options.model_top,
                  "Measure only the K variants the model predicts fastest, plus 3 spread-out "
                  "ones as a check (on the named GPU; without it, the ranking is printed anyway)")
      ->type_name("K");
  command
      .add_option("--counters", options.counters,
                  "Which variants get L2 counters: all (default), top (the K fastest and their "
                  "walk-order twins, measured again with counters), none (timing only)")
      ->type_name("all|top|none");
  command
      .add_option("--counters-top", options.counters_top,
                  "K of --counters top (default " + std::to_string(kDefaultCountersTop) + ")")
      ->type_name("K");
  // Test-only: one more variant whose kernel writes to an illegal address.
  command.add_flag("--plant-fault", options.plant_fault)->group("");
}

std::optional<double> parse_time_budget(const TuningOptions& options) {
  const std::string& text = options.time_budget;
  if (text.empty()) return std::nullopt;
  double seconds = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, seconds);
  if (error != std::errc() || stop != end || !std::isfinite(seconds) || seconds <= 0) {
    throw UsageError("bad --time-budget '" + text + "': allowed a positive number of seconds");
  }
  return seconds;
}

std::optional<int> parse_model_top(const TuningOptions& options) {
  if (options.model_top.empty()) return std::nullopt;
  return parse_positive(options.model_top, "--model-top");
}

void parse_counters_options(const TuningOptions& options, TuningRequest& request) {
  if (!options.counters.empty()) {
    const std::optional<CountersPolicy> policy = parse_counters_policy(options.counters);
    if (!policy) throw UsageError(bad_counters_policy_message(options.counters));
    request.counters = *policy;
  }
  if (!options.counters_top.empty()) {
    if (request.counters != CountersPolicy::top) {
      throw UsageError("--counters-top " + options.counters_top +
                       " needs --counters top: allowed only with it");
    }
    request.counters_top = parse_positive(options.counters_top, "--counters-top");
  }
}

std::filesystem::path writable_database(const TuningOptions& options) {
  const db::DatabaseLocation location = db::locate_database(
      options.database_given ? std::optional<std::string>(options.database) : std::nullopt);
  db::check_database_writable(location);
  return location.path;
}

}  // namespace swr::cli
