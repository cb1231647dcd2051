// What a tuning job is asked to do beyond its problems and compile settings, for every family:
// where to record, whether to measure again, how long to go on. It becomes the settings of a
// session on the present device (tuning_plan.hpp), or, when the named GPU is not here, the words
// of a run that only compiles.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "swr/gpu_profile.hpp"
#include "tuner/tuning/tuning_plan.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

struct TuningRequest {
  std::filesystem::path database;  // checked writable
  bool retune = false;
  std::optional<double> time_budget_seconds;
  // Measure only the model's this many best variants per shape, plus spread-out checks.
  std::optional<int> model_top;
  CountersPolicy counters = CountersPolicy::all;  // which variants get L2 counters
  int counters_top = kDefaultCountersTop;
};

// The session's settings on the present device, as it is (its own SM count, L2 and shared memory,
// not the datasheet's), with the installed driver's version.
TuningSettings tuning_settings(const GpuProfile& present, const TuningRequest& request,
                               const CompileSettings& compile);

// The end of a run that only compiled: "timing needs the <gpu> GPU: <why>; nothing timed".
std::string timing_needs_gpu(const GpuProfile& gpu, const std::optional<GpuProfile>& present);

}  // namespace swr
