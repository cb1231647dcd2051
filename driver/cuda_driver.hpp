// The CUDA driver API, loaded at run time: dlopen("libcuda.so.1") + cuGetProcAddress, never linked.
// Everything that needs no GPU works when this fails to load.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

namespace swr {

// Raised where a device is needed and none is there. what() starts with "no CUDA driver/device
// found".
class NoDeviceError : public std::runtime_error {
 public:
  explicit NoDeviceError(const std::string& detail);
};

// A failed driver call: names the call and the driver's error string.
class DriverError : public std::runtime_error {
 public:
  DriverError(const char* call, CUresult result, const std::string& error_text);
  CUresult result() const { return result_; }

 private:
  CUresult result_;
};

// A CUDA error after which the context is unusable (illegal address, trap, ...).
bool is_context_fatal(CUresult result);

// Entry points, typed with cudaTypedefs.h's PFN_<name>_v<version> (CUDA C++ Programming Guide,
// "Driver Entry Point Access"): each is the form cuGetProcAddress returns at version 13000
// (e.g. cuCtxSynchronize takes a CUcontext there, cuEventElapsedTime is the 12.8 form). A driver
// older than 13.0 is refused.
struct CudaDriver {
  PFN_cuInit_v2000 cuInit = nullptr;
  PFN_cuDriverGetVersion_v2020 cuDriverGetVersion = nullptr;
  PFN_cuGetErrorString_v6000 cuGetErrorString = nullptr;
  PFN_cuDeviceGetCount_v2000 cuDeviceGetCount = nullptr;
  PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
  PFN_cuDeviceGetName_v2000 cuDeviceGetName = nullptr;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
  PFN_cuDeviceTotalMem_v3020 cuDeviceTotalMem = nullptr;
  PFN_cuDeviceGetUuid_v11040 cuDeviceGetUuid = nullptr;  // the UUID nvidia-smi shows
  PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 cuDevicePrimaryCtxRelease = nullptr;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
  PFN_cuCtxGetCurrent_v4000 cuCtxGetCurrent = nullptr;
  PFN_cuCtxSynchronize_v13000 cuCtxSynchronize = nullptr;
  PFN_cuCtxGetDevice_v13000 cuCtxGetDevice = nullptr;  // (CUdevice*, CUcontext)
  PFN_cuCtxGetId_v12000 cuCtxGetId = nullptr;          // unique in the process, unlike the pointer
  PFN_cuModuleLoadData_v2000 cuModuleLoadData = nullptr;
  PFN_cuModuleUnload_v2000 cuModuleUnload = nullptr;
  PFN_cuModuleGetFunction_v2000 cuModuleGetFunction = nullptr;
  PFN_cuFuncSetAttribute_v9000 cuFuncSetAttribute = nullptr;
  PFN_cuFuncGetAttribute_v2020 cuFuncGetAttribute = nullptr;
  PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050
      cuOccupancyMaxActiveBlocksPerMultiprocessor = nullptr;
  PFN_cuOccupancyMaxActiveClusters_v11070 cuOccupancyMaxActiveClusters = nullptr;
  PFN_cuLaunchKernel_v4000 cuLaunchKernel = nullptr;
  PFN_cuTensorMapEncodeTiled_v12000 cuTensorMapEncodeTiled = nullptr;
  PFN_cuTensorMapReplaceAddress_v12000 cuTensorMapReplaceAddress = nullptr;
  PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
  PFN_cuMemFree_v3020 cuMemFree = nullptr;
  PFN_cuMemcpyHtoD_v3020 cuMemcpyHtoD = nullptr;
  PFN_cuMemcpyDtoH_v3020 cuMemcpyDtoH = nullptr;
  PFN_cuMemsetD8Async_v3020 cuMemsetD8Async = nullptr;
  PFN_cuMemsetD32Async_v3020 cuMemsetD32Async = nullptr;
  PFN_cuStreamCreate_v2000 cuStreamCreate = nullptr;
  PFN_cuStreamDestroy_v4000 cuStreamDestroy = nullptr;
  PFN_cuStreamSynchronize_v2000 cuStreamSynchronize = nullptr;
  PFN_cuStreamIsCapturing_v10000 cuStreamIsCapturing = nullptr;
  PFN_cuEventCreate_v2000 cuEventCreate = nullptr;
  PFN_cuEventDestroy_v4000 cuEventDestroy = nullptr;
  PFN_cuEventRecord_v2000 cuEventRecord = nullptr;
  PFN_cuEventSynchronize_v2000 cuEventSynchronize = nullptr;
  PFN_cuEventElapsedTime_v12080 cuEventElapsedTime = nullptr;

  // Loads the library once per process and fetches every entry. Throws NoDeviceError when the
  // library or an entry point is missing.
  static const CudaDriver& get();
  // Like get(), but nullptr instead of throwing.
  static const CudaDriver* try_get();
  // Why loading failed ("cannot load libcuda.so.1 (...)"), or empty when the driver is loaded.
  static std::string load_error();

  // Throws DriverError(call, result) when result != CUDA_SUCCESS.
  void check(CUresult result, const char* call) const;
};

#define SWR_CU(driver, call_expr) (driver).check((driver).call_expr, #call_expr)

}  // namespace swr
