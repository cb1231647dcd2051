#include "tuner/counters/cupti_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

namespace swr {
namespace {

constexpr const char* kLibraryName = "libcupti.so.13";
// libcupti dlopens this by bare name when the host API is first used.
constexpr const char* kPerfHostName = "libnvperf_host.so";

std::vector<std::string> library_candidates() {
  std::vector<std::string> candidates = {kLibraryName};
  std::vector<std::string> roots;
  if (const char* cuda_home = std::getenv("CUDA_HOME"); cuda_home != nullptr && *cuda_home) {
    roots.push_back(cuda_home);
  }
  roots.push_back("/usr/local/cuda");
  for (const std::string& root : roots) {
    candidates.push_back(root + "/lib64/" + kLibraryName);
    candidates.push_back(root + "/extras/CUPTI/lib64/" + kLibraryName);
  }
  return candidates;
}

struct LoadedCupti {
  CuptiLibrary library;
  std::string path;
};

template <class Function>
std::string resolve(void* handle, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(handle, name));
  if (function == nullptr) return std::string(kLibraryName) + " has no " + name;
  return {};
}

// libcupti finds libnvperf_host.so through its own search, which ignores the executable's RUNPATH.
// Loading it from libcupti's directory first makes the later dlopen by soname find
// the copy that is already in the process.
void preload_perf_host_library(void* cupti_symbol) {
  Dl_info info{};
  if (dladdr(cupti_symbol, &info) == 0 || info.dli_fname == nullptr) return;
  const std::filesystem::path directory = std::filesystem::path(info.dli_fname).parent_path();
  const std::filesystem::path perf_host = directory / kPerfHostName;
  std::error_code error;
  if (std::filesystem::exists(perf_host, error)) dlopen(perf_host.c_str(), RTLD_NOW | RTLD_LOCAL);
}

std::string load(LoadedCupti& loaded) {
  void* handle = nullptr;
  std::string first_error;
  for (const std::string& candidate : library_candidates()) {
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      loaded.path = candidate;
      break;
    }
    if (first_error.empty()) {
      const char* error = dlerror();
      first_error = error ? error : "unknown error";
    }
  }
  if (handle == nullptr)
    return std::string("cannot load ") + kLibraryName + " (" + first_error + ")";

  CuptiLibrary& lib = loaded.library;
#define SWR_RESOLVE(name) \
  if (std::string error = resolve(handle, #name, lib.name); !error.empty()) return error
  SWR_RESOLVE(cuptiGetResultString);
  SWR_RESOLVE(cuptiProfilerInitialize);
  SWR_RESOLVE(cuptiProfilerDeInitialize);
  SWR_RESOLVE(cuptiProfilerDeviceSupported);
  SWR_RESOLVE(cuptiDeviceGetChipName);
  SWR_RESOLVE(cuptiProfilerGetCounterAvailability);
  SWR_RESOLVE(cuptiProfilerHostGetSupportedChips);
  SWR_RESOLVE(cuptiProfilerHostInitialize);
  SWR_RESOLVE(cuptiProfilerHostDeinitialize);
  SWR_RESOLVE(cuptiProfilerHostConfigAddMetrics);
  SWR_RESOLVE(cuptiProfilerHostGetConfigImageSize);
  SWR_RESOLVE(cuptiProfilerHostGetConfigImage);
  SWR_RESOLVE(cuptiProfilerHostGetNumOfPasses);
  SWR_RESOLVE(cuptiProfilerHostEvaluateToGpuValues);
  SWR_RESOLVE(cuptiRangeProfilerEnable);
  SWR_RESOLVE(cuptiRangeProfilerDisable);
  SWR_RESOLVE(cuptiRangeProfilerGetCounterDataSize);
  SWR_RESOLVE(cuptiRangeProfilerCounterDataImageInitialize);
  SWR_RESOLVE(cuptiRangeProfilerSetConfig);
  SWR_RESOLVE(cuptiRangeProfilerStart);
  SWR_RESOLVE(cuptiRangeProfilerStop);
  SWR_RESOLVE(cuptiRangeProfilerDecodeData);
  SWR_RESOLVE(cuptiRangeProfilerGetCounterDataInfo);
  SWR_RESOLVE(cuptiRangeProfilerCounterDataGetRangeInfo);
#undef SWR_RESOLVE
  preload_perf_host_library(reinterpret_cast<void*>(lib.cuptiProfilerHostInitialize));
  // The handle is never closed: the entry points live as long as the process.
  return {};
}

const std::variant<LoadedCupti, std::string>& load_once() {
  static const std::variant<LoadedCupti, std::string> loaded = [] {
    LoadedCupti cupti;
    std::string error = load(cupti);
    if (!error.empty()) return std::variant<LoadedCupti, std::string>(std::move(error));
    return std::variant<LoadedCupti, std::string>(std::move(cupti));
  }();
  return loaded;
}

}  // namespace

CuptiError::CuptiError(const char* call, CUptiResult result, const std::string& error_text)
    : std::runtime_error(std::string(call) + " failed: " + error_text), result_(result) {}

const CuptiLibrary* CuptiLibrary::try_get() {
  const auto* loaded = std::get_if<LoadedCupti>(&load_once());
  return loaded ? &loaded->library : nullptr;
}

std::string CuptiLibrary::load_error() {
  const auto* error = std::get_if<std::string>(&load_once());
  return error ? *error : std::string();
}

std::string CuptiLibrary::loaded_path() {
  const auto* loaded = std::get_if<LoadedCupti>(&load_once());
  return loaded ? loaded->path : std::string();
}

std::string CuptiLibrary::result_text(CUptiResult result) const {
  const char* text = nullptr;
  if (cuptiGetResultString == nullptr || cuptiGetResultString(result, &text) != CUPTI_SUCCESS ||
      text == nullptr) {
    text = "CUPTI error";
  }
  return std::string(text) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

void CuptiLibrary::check(CUptiResult result, const char* call) const {
  if (result != CUPTI_SUCCESS) throw CuptiError(call, result, result_text(result));
}

}  // namespace swr
