// One device allocation in the current context, freed on destruction: the tensors a measurement
// bench fills, checks and times.
#pragma once

#include <cstddef>

#include "driver/cuda_driver.hpp"

namespace swr {

class DeviceAllocation {
 public:
  DeviceAllocation(const CudaDriver& driver, std::size_t bytes) : driver_(driver) {
    SWR_CU(driver_, cuMemAlloc(&pointer_, bytes));
  }
  ~DeviceAllocation() { driver_.cuMemFree(pointer_); }
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  CUdeviceptr pointer() const { return pointer_; }

 private:
  const CudaDriver& driver_;
  CUdeviceptr pointer_ = 0;
};

}  // namespace swr
