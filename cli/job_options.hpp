// The options of the commands that compile (compile, tune: parallelism, cache, output, limit) and
// those tuning adds (--db, --time-budget, --both, --retune, --devices, --no-wait, --plan,
// --shard), and what they become: the tuner's compile settings and tuning request.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "tuner/tuning_request.hpp"
#include "tuner/variant_compilation.hpp"

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

// Throws UsageError for a bad value; touches nothing on disk.
CompileSettings parse_compile_options(const CompileOptions& options);

struct TuningOptions {
  std::string database;  // --db
  bool database_given = false;
  std::string time_budget;  // --time-budget SEC
  bool both = false;        // causal and non-causal
  bool retune = false;
  bool plant_fault = false;  // hidden, for tests: add a variant that faults on purpose
  std::string devices;       // --devices all|0,2,5
  bool no_wait = false;      // --no-wait: fail instead of waiting for a device another tuner holds
  std::string plan;          // --plan FILE
  std::string shard;         // --shard I/N
  std::string model_top;     // --model-top K: measure only the model's K best (and checks)
  std::string counters;      // --counters all|top|none
  std::string counters_top;  // --counters-top K
};

void add_tuning_options(CLI::App& command, TuningOptions& options);

// --time-budget in seconds, none when not given; UsageError for anything but a positive number.
std::optional<double> parse_time_budget(const TuningOptions& options);

// --model-top K, none when not given; UsageError for anything but a positive integer.
std::optional<int> parse_model_top(const TuningOptions& options);

// --counters (all when not given) and --counters-top (kDefaultCountersTop when not given) into
// `request`; UsageError for another word, a K that is not a positive integer, or a K without top.
void parse_counters_options(const TuningOptions& options, TuningRequest& request);

// The results database --db (or the default) names, checked writable (UsageError when not).
std::filesystem::path writable_database(const TuningOptions& options);

}  // namespace swr::cli
