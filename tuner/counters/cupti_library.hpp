// CUPTI (the profiler's API), loaded at run time with dlopen like libcuda and libnvrtc: never
// linked, so binaries start where CUPTI is missing. Only the Range Profiler and profiler-host
// entries are used (CUPTI User's Guide, "Range Profiling" and "Profiler Host API").
#pragma once

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace swr {

// A failed CUPTI call: names the call, the result code and CUPTI's text for it.
class CuptiError : public std::runtime_error {
 public:
  CuptiError(const char* call, CUptiResult result, const std::string& error_text);
  CUptiResult result() const { return result_; }

 private:
  CUptiResult result_;
};

// Entry points typed from the CUPTI 13 headers. The host entries (cuptiProfilerHost*) work without
// a driver; every other one must not be called before cuInit succeeded (cuptiDeviceGetChipName
// segfaults without a driver).
struct CuptiLibrary {
  decltype(&::cuptiGetResultString) cuptiGetResultString = nullptr;
  // Target side.
  decltype(&::cuptiProfilerInitialize) cuptiProfilerInitialize = nullptr;
  decltype(&::cuptiProfilerDeInitialize) cuptiProfilerDeInitialize = nullptr;
  decltype(&::cuptiProfilerDeviceSupported) cuptiProfilerDeviceSupported = nullptr;
  decltype(&::cuptiDeviceGetChipName) cuptiDeviceGetChipName = nullptr;
  decltype(&::cuptiProfilerGetCounterAvailability) cuptiProfilerGetCounterAvailability = nullptr;
  // Host side: metric configuration and evaluation.
  decltype(&::cuptiProfilerHostGetSupportedChips) cuptiProfilerHostGetSupportedChips = nullptr;
  decltype(&::cuptiProfilerHostInitialize) cuptiProfilerHostInitialize = nullptr;
  decltype(&::cuptiProfilerHostDeinitialize) cuptiProfilerHostDeinitialize = nullptr;
  decltype(&::cuptiProfilerHostConfigAddMetrics) cuptiProfilerHostConfigAddMetrics = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImageSize) cuptiProfilerHostGetConfigImageSize = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImage) cuptiProfilerHostGetConfigImage = nullptr;
  decltype(&::cuptiProfilerHostGetNumOfPasses) cuptiProfilerHostGetNumOfPasses = nullptr;
  decltype(&::cuptiProfilerHostEvaluateToGpuValues) cuptiProfilerHostEvaluateToGpuValues = nullptr;
  // Range Profiler.
  decltype(&::cuptiRangeProfilerEnable) cuptiRangeProfilerEnable = nullptr;
  decltype(&::cuptiRangeProfilerDisable) cuptiRangeProfilerDisable = nullptr;
  decltype(&::cuptiRangeProfilerGetCounterDataSize) cuptiRangeProfilerGetCounterDataSize = nullptr;
  decltype(&::cuptiRangeProfilerCounterDataImageInitialize)
      cuptiRangeProfilerCounterDataImageInitialize = nullptr;
  decltype(&::cuptiRangeProfilerSetConfig) cuptiRangeProfilerSetConfig = nullptr;
  decltype(&::cuptiRangeProfilerStart) cuptiRangeProfilerStart = nullptr;
  decltype(&::cuptiRangeProfilerStop) cuptiRangeProfilerStop = nullptr;
  decltype(&::cuptiRangeProfilerDecodeData) cuptiRangeProfilerDecodeData = nullptr;
  decltype(&::cuptiRangeProfilerGetCounterDataInfo) cuptiRangeProfilerGetCounterDataInfo = nullptr;
  decltype(&::cuptiRangeProfilerCounterDataGetRangeInfo) cuptiRangeProfilerCounterDataGetRangeInfo =
      nullptr;

  // Loads libcupti.so.13 once per process (the loader's path, then $CUDA_HOME and /usr/local/cuda,
  // lib64/ and extras/CUPTI/lib64/). nullptr when it cannot be loaded; load_error() says why.
  static const CuptiLibrary* try_get();
  static std::string load_error();
  // Where the library was loaded from, empty when it was not.
  static std::string loaded_path();

  // Throws CuptiError(call, result) when result != CUPTI_SUCCESS.
  void check(CUptiResult result, const char* call) const;
  // "CUPTI_ERROR_INVALID_CHIP_NAME (46)"
  std::string result_text(CUptiResult result) const;
};

#define SWR_CUPTI(library, call_expr) (library).check((library).call_expr, #call_expr)

// A params struct zeroed, with its structSize set: CUPTI's `T p{T_STRUCT_SIZE}`, spelled so that
// -Wextra does not flag the fields left to zero.
template <class Params>
Params cupti_params(std::size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}
#define SWR_CUPTI_PARAMS(Type) ::swr::cupti_params<Type>(Type##_STRUCT_SIZE)

}  // namespace swr
