// The tuner's own small CUDA programs (L2 flush, reference attention, random fill): compiled with
// NVRTC once per process and architecture, loaded into the current context, launched by name.
#pragma once

#include <string>

#include "driver/cuda_driver.hpp"

namespace swr {

// NVRTC's target for a device: "sm_<major><minor>" from its compute capability ("sm_90").
std::string device_arch(const CudaDriver& driver, CUdevice device);

class HelperKernelModule {
 public:
  // `name` keys the per-process cubin cache together with the arch; `source` is a whole CUDA
  // translation unit with extern "C" kernels and no includes. Throws std::runtime_error with
  // NVRTC's log when it does not compile, DriverError when the module does not load.
  HelperKernelModule(const CudaDriver& driver, CUdevice device, const std::string& name,
                     const std::string& source);
  ~HelperKernelModule();
  HelperKernelModule(const HelperKernelModule&) = delete;
  HelperKernelModule& operator=(const HelperKernelModule&) = delete;

  const CudaDriver& driver() const { return driver_; }
  const std::string& arch() const { return arch_; }
  CUfunction function(const char* entry) const;

  // Launches `function` with the arguments by value, in the kernel's parameter order.
  template <class... Arguments>
  void launch(CUfunction function, unsigned grid, unsigned block, CUstream stream,
              Arguments... arguments) const {
    void* pointers[] = {static_cast<void*>(&arguments)...};
    SWR_CU(driver_,
           cuLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, stream, pointers, nullptr));
  }

 private:
  const CudaDriver& driver_;
  std::string arch_;
  CUmodule module_ = nullptr;
};

}  // namespace swr
