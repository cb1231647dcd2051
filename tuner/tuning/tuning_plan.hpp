// What a tuning run sets out to do and what it did, for every family: the settings (device,
// database, compiling, --limit, --time-budget, --retune), the shapes with the variants to measure,
// and the summary a session returns.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "swr/gpu_profile.hpp"
#include "tuner/tuning/counters_policy.hpp"

namespace swr {

struct TuningSettings {
  GpuProfile gpu;              // the device that measures (the present one, its own counts)
  std::string driver_version;  // e.g. "13.0"
  std::filesystem::path database;
  std::filesystem::path cubin_cache;
  int compile_threads = 0;                        // 0: hardware threads
  std::optional<int> limit;                       // measure at most this many new variants
  std::optional<double> time_budget_seconds;      // start no new variant after this long
  bool retune = false;                            // measure again what is already measured
  CountersPolicy counters = CountersPolicy::all;  // --counters (counters_policy.hpp)
  int counters_top = kDefaultCountersTop;         // --counters-top K, for CountersPolicy::top
  std::size_t table_rows = 10;                    // variants in the closing table, per shape
  // One per measurer of the session ("device 1"), named in the progress lines when there are
  // several; empty: "device 0", "device 1", ...
  std::vector<std::string> device_names;
  // What the measurement method of a variant adds under "selection" (how it came to be measured:
  // --model-top), keyed "<problem key>/<config key>"; none for a plain tune.
  std::map<std::string, nlohmann::json> selection;
};

// The name of each of `count` measurers: settings.device_names, else "device 0", "device 1", ...
std::vector<std::string> measurer_names(const TuningSettings& settings, std::size_t count);

// One problem and its variants, measured in this order (as far as compiling allows).
template <class Problem, class Config>
struct TuningShapeOf {
  Problem problem;
  std::vector<Config> configs;
};

template <class Problem, class Config>
struct TuningPlanOf : TuningSettings {
  std::vector<TuningShapeOf<Problem, Config>> shapes;
};

struct TuningSummary {
  int already_measured = 0;  // skipped: the database has them
  int planned = 0;           // variants this run set out to measure
  int recorded = 0;          // committed, whatever their status
  int failed = 0;            // of those, not ok
  int left_for_later = 0;    // missing variants beyond --limit
  int counted_again = 0;     // of planned: measured again with counters (--counters top)
  bool interrupted = false;
  bool budget_reached = false;

  // 130 after Ctrl-C (what a shell reports for SIGINT), else 0: failed variants are results.
  int exit_code() const { return interrupted ? 130 : 0; }
};

}  // namespace swr
