#include "tuner/tuning_request.hpp"

#include "driver/cuda_driver.hpp"

namespace swr {
namespace {

// "13.0" for 13000: the form stored with the GPU row.
std::string driver_version() {
  int version = 0;
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuDriverGetVersion(&version));
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

TuningSettings tuning_settings(const GpuProfile& present, const TuningRequest& request,
                               const CompileSettings& compile) {
  TuningSettings settings;
  settings.gpu = present;
  settings.driver_version = driver_version();
  settings.database = request.database;
  settings.cubin_cache = compile.cache_dir;
  settings.compile_threads = compile.jobs;
  settings.retune = request.retune;
  settings.counters = request.counters;
  settings.counters_top = request.counters_top;
  settings.time_budget_seconds = request.time_budget_seconds;
  if (compile.limit > 0) settings.limit = compile.limit;
  return settings;
}

std::string timing_needs_gpu(const GpuProfile& gpu, const std::optional<GpuProfile>& present) {
  const std::string why =
      present ? "the present device is " + present->description + " (" + present->name + ")"
              : "no CUDA driver/device found on this machine";
  return "timing needs the " + gpu.name + " GPU: " + why + "; nothing timed";
}

}  // namespace swr
