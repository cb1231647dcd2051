// Driver entry points the runtime needs beyond driver/cuda_driver.hpp's: which device and
// which context (by its process-unique id) a user's current context is. Fetched the same way,
// through cuGetProcAddress at the 13.0 ABI from the libcuda CudaDriver loaded; nothing is linked.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

namespace swr {

struct ContextDriver {
  PFN_cuCtxGetDevice_v13000 cuCtxGetDevice = nullptr;  // (CUdevice*, CUcontext)
  PFN_cuCtxGetId_v12000 cuCtxGetId = nullptr;

  // Loads CudaDriver first. Throws NoDeviceError when the driver or an entry point is missing.
  static const ContextDriver& get();
};

}  // namespace swr
