#include "tuner/counters/l2_counter_session.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <mutex>
#include <stdexcept>

#include "tuner/counters/cupti_library.hpp"
#include "tuner/counters/l2_metric_set.hpp"
#include "tuner/l2_flush.hpp"

namespace swr {
namespace {

// Ranges one pass may hold: the flush, the measured kernel, and room for a launch that runs a
// few kernels (a memset kernel before a persistent kernel, say).
constexpr std::size_t kMaxRanges = 16;

// cuptiProfilerInitialize/DeInitialize act on the whole process: sessions share one.
std::mutex profiler_users_mutex;
int profiler_users = 0;

void acquire_profiler(const CuptiLibrary& cupti) {
  std::lock_guard<std::mutex> lock(profiler_users_mutex);
  if (profiler_users == 0) {
    auto params = SWR_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    SWR_CUPTI(cupti, cuptiProfilerInitialize(&params));
  }
  ++profiler_users;
}

void release_profiler(const CuptiLibrary& cupti) {
  std::lock_guard<std::mutex> lock(profiler_users_mutex);
  if (--profiler_users == 0) {
    auto params = SWR_CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params);
    cupti.cuptiProfilerDeInitialize(&params);
  }
}

// "RmProfilingAdminOnly: 1" in the driver's parameters: counters are for admins only.
bool profiling_restricted_to_admins() {
  std::ifstream params("/proc/driver/nvidia/params");
  std::string line;
  while (std::getline(params, line)) {
    if (line.rfind("RmProfilingAdminOnly:", 0) == 0) return line.find('1') != std::string::npos;
  }
  return false;
}

std::string unsupported_device_reason(const CUpti_Profiler_DeviceSupported_Params& support) {
  std::string parts;
  auto note = [&](CUpti_Profiler_Support_Level level, const char* what) {
    if (level == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
    if (!parts.empty()) parts += ", ";
    parts += what;
    if (level == CUPTI_PROFILER_CONFIGURATION_DISABLED) parts += " (disabled by the system)";
  };
  note(support.architecture, "architecture older than compute 7.0");
  note(support.sli, "SLI");
  note(support.vGpu, "vGPU");
  note(support.confidentialCompute, "confidential computing");
  note(support.cmp, "a CMP device");
  note(support.wsl, "WSL");
  if (parts.empty())
    parts = "support level " + std::to_string(static_cast<int>(support.isSupported));
  return "the device does not support range profiling: " + parts;
}

}  // namespace

void print_profiling_notice(const std::string& line) {
  std::cerr << "swr: " << line << "\n";
}

namespace {

// CUPTI's auto ranges named by launch number ("0", "1", ...) or not at all: no kernel name to
// match.
bool range_name_is_a_number(const std::string& name) {
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<std::size_t> select_measured_range(const std::vector<std::string>& range_names,
                                                 const std::string& kernel_name) {
  std::size_t flush = 0;
  for (std::size_t i = 0; i < range_names.size(); ++i) {
    if (range_names[i].find(L2Flush::kKernelName) != std::string::npos) {
      flush = i;
      break;
    }
  }
  std::optional<std::size_t> last;
  std::optional<std::size_t> last_named;
  bool ranges_carry_kernel_names = false;
  for (std::size_t i = 0; i < range_names.size(); ++i) {
    if (i == flush) continue;
    last = i;
    if (!range_name_is_a_number(range_names[i])) ranges_carry_kernel_names = true;
    if (!kernel_name.empty() && range_names[i].find(kernel_name) != std::string::npos) {
      last_named = i;
    }
  }
  if (last_named) return last_named;
  if (!kernel_name.empty() && ranges_carry_kernel_names) {
    // Another kernel's counters are not this one's: refuse rather than record them.
    std::string recorded;
    for (const std::string& name : range_names) recorded += (recorded.empty() ? "" : ", ") + name;
    throw std::runtime_error("no profiler range for kernel '" + kernel_name + "' among the " +
                             std::to_string(range_names.size()) + " recorded (" + recorded +
                             "): its L2 counters are missing");
  }
  return last;
}

std::string describe_profiling_error(const CuptiError& error) {
  std::string text = error.what();
  switch (error.result()) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      text += profiling_restricted_to_admins()
                  ? "; GPU performance counters are restricted to admin users "
                    "(/proc/driver/nvidia/params: RmProfilingAdminOnly: 1)"
                  : "; GPU performance counters are restricted to admin users";
      text +=
          ": load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0, or run with "
          "CAP_SYS_ADMIN (CAP_PERFMON from driver R565); "
          "see https://developer.nvidia.com/ERR_NVGPUCTRPERM";
      break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      text += "; another profiler (ncu, nsys, compute-sanitizer) holds CUPTI in this process";
      break;
    case CUPTI_ERROR_HARDWARE_BUSY:
      text += "; the counters are in use by another process (a profiler or DCGM)";
      break;
    case CUPTI_ERROR_NOT_INITIALIZED:
      text += "; the driver may be too old for CUPTI 13";
      break;
    default:
      break;
  }
  return text;
}

std::vector<std::size_t> attribute_batch_ranges(const std::vector<std::string>& range_names,
                                                const std::vector<std::string>& kernel_names) {
  const std::size_t launches = kernel_names.size();
  std::vector<std::size_t> flushes;
  for (std::size_t i = 0; i < range_names.size(); ++i) {
    if (range_names[i].find(L2Flush::kKernelName) != std::string::npos) flushes.push_back(i);
  }
  std::vector<std::size_t> measured;
  if (!flushes.empty()) {
    if (flushes.size() != launches || flushes.front() != 0) {
      throw std::runtime_error(std::to_string(flushes.size()) + " flush ranges among " +
                               std::to_string(range_names.size()) + " for " +
                               std::to_string(launches) + " launches");
    }
    for (std::size_t launch = 0; launch < launches; ++launch) {
      const std::size_t begin = flushes[launch];
      const std::size_t end = launch + 1 < launches ? flushes[launch + 1] : range_names.size();
      const std::vector<std::string> segment(
          range_names.begin() + static_cast<std::ptrdiff_t>(begin),
          range_names.begin() + static_cast<std::ptrdiff_t>(end));
      const std::optional<std::size_t> within =
          select_measured_range(segment, kernel_names[launch]);
      if (!within) {
        throw std::runtime_error("launch " + std::to_string(launch) +
                                 " of the batch ran no kernel");
      }
      measured.push_back(begin + *within);
    }
    return measured;
  }
  // Running numbers only: nothing tells a launch's extra kernel from the next flush.
  if (range_names.size() != 2 * launches) {
    throw std::runtime_error(std::to_string(range_names.size()) + " unnamed ranges for " +
                             std::to_string(launches) +
                             " launches: not one flush and one kernel each");
  }
  for (std::size_t launch = 0; launch < launches; ++launch) measured.push_back(2 * launch + 1);
  return measured;
}

L2CounterSession::L2CounterSession(const DeviceContext* context, const L2Flush* flush,
                                   ProfilingNotice notice)
    : notice_(std::move(notice)), context_(context), flush_(flush) {
  try {
    open(context);
  } catch (const CuptiError& error) {
    become_unavailable(describe_profiling_error(error));
  } catch (const std::exception& error) {
    become_unavailable(error.what());
  }
}

L2CounterSession::~L2CounterSession() {
  disable();
  configuration_.reset();
  if (profiler_initialized_) release_profiler(*cupti_);
}

std::size_t L2CounterSession::passes() const {
  return configuration_ ? configuration_->passes() : 0;
}

void L2CounterSession::open(const DeviceContext* context) {
  // The order matters: CUPTI's target calls must never run before cuInit succeeded (without a
  // driver cuptiDeviceGetChipName segfaults).
  const CudaDriver* driver = CudaDriver::try_get();
  if (driver == nullptr) throw std::runtime_error(CudaDriver::load_error());
  if (context == nullptr) throw std::runtime_error("no CUDA context");
  cupti_ = CuptiLibrary::try_get();
  if (cupti_ == nullptr) throw std::runtime_error(CuptiLibrary::load_error());
  acquire_profiler(*cupti_);
  profiler_initialized_ = true;

  auto support = SWR_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  support.cuDevice = context->device();
  support.api = CUPTI_PROFILER_RANGE_PROFILING;
  SWR_CUPTI(*cupti_, cuptiProfilerDeviceSupported(&support));
  if (support.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    throw std::runtime_error(unsupported_device_reason(support));
  }

  auto chip = SWR_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = static_cast<std::size_t>(context->ordinal());
  SWR_CUPTI(*cupti_, cuptiDeviceGetChipName(&chip));
  chip_ = chip.pChipName != nullptr ? chip.pChipName : "";

  auto availability = SWR_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  availability.ctx = context->context();
  SWR_CUPTI(*cupti_, cuptiProfilerGetCounterAvailability(&availability));
  std::vector<std::uint8_t> counter_availability(availability.counterAvailabilityImageSize);
  availability.pCounterAvailabilityImage = counter_availability.data();
  SWR_CUPTI(*cupti_, cuptiProfilerGetCounterAvailability(&availability));

  L2MetricConfiguration metrics = configure_l2_metrics(*cupti_, chip_, counter_availability);
  metric_set_ = std::move(metrics.set);
  configuration_ = std::move(metrics.configuration);
  enable();
  if (flush_ == nullptr) {
    own_flush_ = std::make_unique<L2Flush>(*context);
    flush_ = own_flush_.get();
  }
}

void L2CounterSession::enable() {
  auto enable = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
  enable.ctx = context_->context();
  SWR_CUPTI(*cupti_, cuptiRangeProfilerEnable(&enable));
  profiler_ = enable.pRangeProfilerObject;

  // The images belong to the profiler object just made (the batch's is made when first used).
  counter_data_ = counter_data_image(kMaxRanges);
  batch_counter_data_.clear();
}

std::vector<std::uint8_t> L2CounterSession::counter_data_image(std::size_t max_ranges) const {
  std::vector<const char*> names = configuration_->metric_name_pointers();
  auto size = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = profiler_;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = max_ranges;
  size.maxNumRangeTreeNodes = max_ranges;
  SWR_CUPTI(*cupti_, cuptiRangeProfilerGetCounterDataSize(&size));
  return std::vector<std::uint8_t>(size.counterDataSize, 0);
}

void L2CounterSession::disable() {
  if (profiler_ == nullptr) return;
  // After a failure mid-pass the profiler is still started: stop it first.
  if (pass_open_) {
    auto stop = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
    stop.pRangeProfilerObject = profiler_;
    cupti_->cuptiRangeProfilerStop(&stop);
    pass_open_ = false;
  }
  auto disable = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
  disable.pRangeProfilerObject = profiler_;
  cupti_->cuptiRangeProfilerDisable(&disable);
  profiler_ = nullptr;
}

void L2CounterSession::become_unavailable(const std::string& reason) {
  if (!unavailable_reason_.empty()) return;
  unavailable_reason_ = "profiling unavailable: " + reason;
  if (notice_) notice_(unavailable_reason_);
}

L2Counters L2CounterSession::measure(CUstream stream, const MeasuredLaunch& launch,
                                     const std::string& kernel_name) {
  if (!available()) return {};
  try {
    if (profiler_ == nullptr) enable();
    return collect(stream, launch, kernel_name);
  } catch (const CuptiError& error) {
    disable();
    become_unavailable(describe_profiling_error(error));
    return {};
  } catch (...) {
    // The launch (or the flush) failed: the kernel's fault, not the profiler's. Stop and
    // disable; the next measurement enables again.
    disable();
    throw;
  }
}

void L2CounterSession::configure_pass(std::vector<std::uint8_t>& image, std::size_t max_ranges) {
  auto reset = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  reset.pRangeProfilerObject = profiler_;
  reset.counterDataSize = image.size();
  reset.pCounterData = image.data();
  SWR_CUPTI(*cupti_, cuptiRangeProfilerCounterDataImageInitialize(&reset));

  const std::vector<std::uint8_t>& config_image = configuration_->config_image();
  auto config = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  config.pRangeProfilerObject = profiler_;
  config.configSize = config_image.size();
  config.pConfig = config_image.data();
  config.counterDataImageSize = image.size();
  config.pCounterDataImage = image.data();
  config.range = CUPTI_AutoRange;
  config.replayMode = CUPTI_UserReplay;
  config.maxRangesPerPass = max_ranges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  SWR_CUPTI(*cupti_, cuptiRangeProfilerSetConfig(&config));
}

std::vector<std::string> L2CounterSession::run_passes(std::vector<std::uint8_t>& image,
                                                      std::size_t max_ranges,
                                                      const std::function<void()>& pass) {
  configure_pass(image, max_ranges);
  // User replay: every pass re-runs the same launches until CUPTI has all its passes. The bound
  // only guards against a profiler that never reports completion.
  const std::size_t max_passes = 2 * configuration_->passes() + 2;
  bool all_submitted = false;
  for (std::size_t pass_index = 0; pass_index < max_passes && !all_submitted; ++pass_index) {
    auto start = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    start.pRangeProfilerObject = profiler_;
    SWR_CUPTI(*cupti_, cuptiRangeProfilerStart(&start));
    pass_open_ = true;
    pass();
    auto stop = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
    stop.pRangeProfilerObject = profiler_;
    pass_open_ = false;
    SWR_CUPTI(*cupti_, cuptiRangeProfilerStop(&stop));
    all_submitted = stop.isAllPassSubmitted != 0;
  }
  if (!all_submitted) {
    throw CuptiError("cuptiRangeProfilerStop", CUPTI_ERROR_UNKNOWN,
                     "passes still pending after " + std::to_string(max_passes) + " (" +
                         std::to_string(configuration_->passes()) + " expected)");
  }

  auto decode = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = profiler_;
  SWR_CUPTI(*cupti_, cuptiRangeProfilerDecodeData(&decode));
  if (decode.numOfRangeDropped > 0) {
    // The launches ran more kernels than the ranges allow: the caller's error, not the profiler's.
    throw RangesDropped(std::to_string(decode.numOfRangeDropped) +
                        " profiler ranges dropped: the measured launches ran more than " +
                        std::to_string(max_ranges) + " kernels, flushes included");
  }

  auto info = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = image.data();
  info.counterDataImageSize = image.size();
  SWR_CUPTI(*cupti_, cuptiRangeProfilerGetCounterDataInfo(&info));
  std::vector<std::string> names;
  for (std::size_t i = 0; i < info.numTotalRanges; ++i) {
    auto range = SWR_CUPTI_PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params);
    range.pCounterDataImage = image.data();
    range.counterDataImageSize = image.size();
    range.rangeIndex = i;
    range.rangeDelimiter = "/";
    SWR_CUPTI(*cupti_, cuptiRangeProfilerCounterDataGetRangeInfo(&range));
    names.emplace_back(range.rangeName != nullptr ? range.rangeName : "");
  }
  return names;
}

L2Counters L2CounterSession::collect(CUstream stream, const MeasuredLaunch& launch,
                                     const std::string& kernel_name) {
  std::vector<std::string> names = run_passes(counter_data_, kMaxRanges, [&] {
    flush_->launch(stream);
    launch(stream);
  });
  const std::optional<std::size_t> measured = select_measured_range(names, kernel_name);
  if (!measured) {
    throw std::runtime_error(std::to_string(names.size()) +
                             " profiler ranges recorded: the measured launch ran no kernel");
  }
  L2Counters counters = metric_set_.evaluate(configuration_->evaluate(counter_data_, *measured));
  last_range_names_ = std::move(names);
  last_range_index_ = *measured;
  return counters;
}

std::vector<L2Counters> L2CounterSession::measure_batch(CUstream stream,
                                                        const std::vector<BatchLaunch>& launches) {
  if (!available()) return std::vector<L2Counters>(launches.size());
  if (launches.size() > kMaxBatchLaunches) {
    throw std::invalid_argument("a profiling session takes at most " +
                                std::to_string(kMaxBatchLaunches) + " launches, not " +
                                std::to_string(launches.size()));
  }
  try {
    if (profiler_ == nullptr) enable();
    return collect_batch(stream, launches);
  } catch (const CuptiError& error) {
    disable();
    become_unavailable(describe_profiling_error(error));
    return std::vector<L2Counters>(launches.size());
  } catch (...) {
    // A launch failed, or the ranges could not be attributed: stop and disable; the next
    // measurement enables again.
    disable();
    throw;
  }
}

std::vector<L2Counters> L2CounterSession::collect_batch(CUstream stream,
                                                        const std::vector<BatchLaunch>& launches) {
  // Per launch: the flush, the measured kernel and room for two more (a launch may run a helper
  // kernel, e.g. a memset done by one), plus the slack of a single session.
  const std::size_t max_ranges = kMaxBatchLaunches * 4 + kMaxRanges;
  if (batch_counter_data_.empty()) batch_counter_data_ = counter_data_image(max_ranges);
  std::vector<std::string> kernel_names;
  for (const BatchLaunch& launch : launches) kernel_names.push_back(launch.kernel_name);

  const std::vector<std::string> names = run_passes(batch_counter_data_, max_ranges, [&] {
    for (std::size_t i = 0; i < launches.size(); ++i) {
      flush_->launch(stream);
      try {
        launches[i].launch(stream);
      } catch (const DriverError& error) {
        if (is_context_fatal(error.result())) throw;  // the worker process ends with it
        throw BatchLaunchFailed(i, error.what());
      } catch (const CuptiError&) {
        throw;
      } catch (const std::exception& error) {
        throw BatchLaunchFailed(i, error.what());
      }
    }
  });
  const std::vector<std::size_t> ranges = attribute_batch_ranges(names, kernel_names);
  std::vector<L2Counters> counters;
  for (std::size_t range : ranges) {
    counters.push_back(metric_set_.evaluate(configuration_->evaluate(batch_counter_data_, range)));
  }
  return counters;
}

}  // namespace swr
