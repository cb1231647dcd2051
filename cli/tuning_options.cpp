#include "cli/tuning_options.hpp"

#include <charconv>
#include <cmath>

#include "driver/cuda_driver.hpp"
#include "swr/usage_error.hpp"

namespace swr::cli {
namespace {

// "13.0" for 13000: the form stored with the GPU row.
std::string driver_version() {
  int version = 0;
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuDriverGetVersion(&version));
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

void add_tuning_options(CLI::App& command, TuningOptions& options) {
  command
      .add_option("--db", options.database,
                  "Results database (default: $SWR_DB, else $XDG_CACHE_HOME/swr/results.db)")
      ->type_name("PATH")
      ->each([&options](const std::string&) { options.database_given = true; });
  command
      .add_option("--time-budget", options.time_budget,
                  "Start no new variant after SEC seconds (the same command resumes)")
      ->type_name("SEC");
  command.add_flag("--both", options.both, "Tune the causal and the non-causal shape");
  command.add_flag("--retune", options.retune, "Measure again the variants already measured");
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

TuningSettings tuning_settings(const GpuProfile& present, const std::filesystem::path& database,
                               const CompileSettings& compile, const TuningOptions& options,
                               std::optional<double> time_budget) {
  TuningSettings settings;
  settings.gpu = present;
  settings.driver_version = driver_version();
  settings.database = database;
  settings.cubin_cache = compile.cache_dir;
  settings.compile_threads = compile.jobs;
  settings.retune = options.retune;
  settings.time_budget_seconds = time_budget;
  if (compile.limit > 0) settings.limit = compile.limit;
  return settings;
}

std::string timing_needs_gpu(const GpuProfile& gpu, const std::optional<GpuProfile>& present) {
  const std::string why =
      present ? "the present device is " + present->description + " (" + present->name + ")"
              : "no CUDA driver/device found on this machine";
  return "timing needs the " + gpu.name + " GPU: " + why + "; nothing timed";
}

}  // namespace swr::cli
