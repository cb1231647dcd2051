// The options tuning adds to the problem and compile options of the main job (--db,
// --time-budget, --both, --retune), for every family, and what they become: the settings of a
// tuning session on the present device (tuning_plan.hpp), or the words of a run that only
// compiles because the named GPU is not here.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "cli/compile_options.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/tuning/tuning_plan.hpp"

namespace swr::cli {

struct TuningOptions {
  std::string database;  // --db
  bool database_given = false;
  std::string time_budget;  // --time-budget SEC
  bool both = false;        // causal and non-causal
  bool retune = false;
  bool plant_fault = false;  // hidden, for tests: add a variant that faults on purpose
};

void add_tuning_options(CLI::App& command, TuningOptions& options);

// --time-budget in seconds, none when not given; UsageError for anything but a positive number.
std::optional<double> parse_time_budget(const TuningOptions& options);

// The session's settings on the present device, as it is (its own SM count, L2 and shared memory,
// not the datasheet's), with the installed driver's version.
TuningSettings tuning_settings(const GpuProfile& present, const std::filesystem::path& database,
                               const CompileSettings& compile, const TuningOptions& options,
                               std::optional<double> time_budget);

// The end of a run that only compiled: "timing needs the <gpu> GPU: <why>; nothing timed".
std::string timing_needs_gpu(const GpuProfile& gpu, const std::optional<GpuProfile>& present);

}  // namespace swr::cli
