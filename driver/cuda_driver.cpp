// Loads libcuda at run time and fetches every entry point through cuGetProcAddress, asking for the
// ABI of the toolkit the headers come from (13.0), so that each pointer matches its PFN typedef.
#include "driver/cuda_driver.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <memory>
#include <string>
#include <variant>

namespace swr {

namespace {

// The ABI version the PFN typedefs in cuda_driver.hpp were chosen for. A driver older than this
// would hand back older forms of some entries (cuCtxSynchronize without its context argument).
constexpr int kRequiredDriverVersion = 13000;

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

class DriverLoader {
 public:
  explicit DriverLoader(CudaDriver& driver) : driver_(driver) {}

  // Returns an empty string on success, else what went wrong.
  std::string load() {
    library_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) {
      const char* error = dlerror();
      return std::string("cannot load libcuda.so.1 (") + (error ? error : "unknown error") + ")";
    }
    get_proc_address_ =
        reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library_, "cuGetProcAddress_v2"));
    if (get_proc_address_ == nullptr) {
      return "libcuda.so.1 has no cuGetProcAddress_v2 (driver older than CUDA 12.0)";
    }
    // cuInit and cuDriverGetVersion have one form only; fetch them at their first version.
    if (std::string error = fetch("cuInit", driver_.cuInit, 2000); !error.empty()) return error;
    if (std::string error = fetch("cuDriverGetVersion", driver_.cuDriverGetVersion, 2020);
        !error.empty()) {
      return error;
    }
    if (CUresult result = driver_.cuInit(0); result != CUDA_SUCCESS) {
      return "cuInit failed with CUresult " + std::to_string(static_cast<int>(result)) +
             (result == CUDA_ERROR_NO_DEVICE ? " (no CUDA-capable device)" : "");
    }
    int driver_version = 0;
    if (driver_.cuDriverGetVersion(&driver_version) != CUDA_SUCCESS) {
      return "cuDriverGetVersion failed";
    }
    if (driver_version < kRequiredDriverVersion) {
      return "CUDA driver " + version_text(driver_version) + " is older than " +
             version_text(kRequiredDriverVersion) + ", which swr's kernels and entry points need";
    }
    return fetch_all(std::min(kRequiredDriverVersion, driver_version));
  }

 private:
  template <class Pointer>
  std::string fetch(const char* name, Pointer& pointer, int version) {
    void* address = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult result =
        get_proc_address_(name, &address, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || address == nullptr) {
      return std::string("the driver has no entry point ") + name + " for CUDA " +
             version_text(version) + " (CUresult " + std::to_string(static_cast<int>(result)) +
             ", status " + std::to_string(static_cast<int>(status)) + ")";
    }
    pointer = reinterpret_cast<Pointer>(address);
    return {};
  }

  std::string fetch_all(int version) {
    // The name is passed as text, not through cuda.h's macros (cuMemAlloc -> cuMemAlloc_v2):
    // cuGetProcAddress takes base names and picks the form by version.
#define SWR_FETCH(name) \
  if (std::string error = fetch(#name, driver_.name, version); !error.empty()) return error
    SWR_FETCH(cuGetErrorString);
    SWR_FETCH(cuDeviceGetCount);
    SWR_FETCH(cuDeviceGet);
    SWR_FETCH(cuDeviceGetName);
    SWR_FETCH(cuDeviceGetAttribute);
    SWR_FETCH(cuDeviceTotalMem);
    SWR_FETCH(cuDeviceGetUuid);
    SWR_FETCH(cuDevicePrimaryCtxRetain);
    SWR_FETCH(cuDevicePrimaryCtxRelease);
    SWR_FETCH(cuCtxSetCurrent);
    SWR_FETCH(cuCtxGetCurrent);
    SWR_FETCH(cuCtxSynchronize);
    SWR_FETCH(cuCtxGetDevice);
    SWR_FETCH(cuCtxGetId);
    SWR_FETCH(cuModuleLoadData);
    SWR_FETCH(cuModuleUnload);
    SWR_FETCH(cuModuleGetFunction);
    SWR_FETCH(cuFuncSetAttribute);
    SWR_FETCH(cuFuncGetAttribute);
    SWR_FETCH(cuOccupancyMaxActiveBlocksPerMultiprocessor);
    SWR_FETCH(cuOccupancyMaxActiveClusters);
    SWR_FETCH(cuLaunchKernel);
    SWR_FETCH(cuTensorMapEncodeTiled);
    SWR_FETCH(cuTensorMapReplaceAddress);
    SWR_FETCH(cuMemAlloc);
    SWR_FETCH(cuMemFree);
    SWR_FETCH(cuMemcpyHtoD);
    SWR_FETCH(cuMemcpyDtoH);
    SWR_FETCH(cuMemsetD8Async);
    SWR_FETCH(cuMemsetD32Async);
    SWR_FETCH(cuStreamCreate);
    SWR_FETCH(cuStreamDestroy);
    SWR_FETCH(cuStreamSynchronize);
    SWR_FETCH(cuStreamIsCapturing);
    SWR_FETCH(cuEventCreate);
    SWR_FETCH(cuEventDestroy);
    SWR_FETCH(cuEventRecord);
    SWR_FETCH(cuEventSynchronize);
    SWR_FETCH(cuEventElapsedTime);
#undef SWR_FETCH
    return {};
  }

  CudaDriver& driver_;
  // Never closed: entry points stay valid for the life of the process.
  void* library_ = nullptr;
  PFN_cuGetProcAddress_v12000 get_proc_address_ = nullptr;
};

// The one load attempt of the process: either a driver or the reason there is none.
const std::variant<CudaDriver, std::string>& load_once() {
  static const std::variant<CudaDriver, std::string> loaded = [] {
    CudaDriver driver;
    std::string error = DriverLoader(driver).load();
    if (!error.empty()) return std::variant<CudaDriver, std::string>(std::move(error));
    return std::variant<CudaDriver, std::string>(driver);
  }();
  return loaded;
}

}  // namespace

NoDeviceError::NoDeviceError(const std::string& detail)
    : std::runtime_error("no CUDA driver/device found: " + detail) {}

DriverError::DriverError(const char* call, CUresult result, const std::string& error_text)
    : std::runtime_error(std::string(call) + " failed: " + error_text + " (CUresult " +
                         std::to_string(static_cast<int>(result)) + ")"),
      result_(result) {}

const CudaDriver& CudaDriver::get() {
  const auto& loaded = load_once();
  if (const auto* error = std::get_if<std::string>(&loaded)) throw NoDeviceError(*error);
  return std::get<CudaDriver>(loaded);
}

const CudaDriver* CudaDriver::try_get() {
  return std::get_if<CudaDriver>(&load_once());
}

std::string CudaDriver::load_error() {
  const auto* error = std::get_if<std::string>(&load_once());
  return error ? *error : std::string();
}

void CudaDriver::check(CUresult result, const char* call) const {
  if (result == CUDA_SUCCESS) return;
  const char* text = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(result, &text) != CUDA_SUCCESS ||
      text == nullptr) {
    text = "unknown error";
  }
  throw DriverError(call, result, text);
}

bool is_context_fatal(CUresult result) {
  switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

}  // namespace swr
