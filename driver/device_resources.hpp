// What a measurement or a launch holds on the device, released on destruction: memory (a
// DeviceAllocation) and a loaded kernel (a LoadedCubin).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"

namespace swr {

// One device allocation in the current context, freed on destruction: the tensors a measurement
// bench fills, checks and times, the GPU reference's buffers. At least one byte (cuMemAlloc
// refuses 0).
class DeviceAllocation {
 public:
  DeviceAllocation(const CudaDriver& driver, std::size_t bytes) : driver_(driver) {
    SWR_CU(driver_, cuMemAlloc(&pointer_, bytes > 0 ? bytes : 1));
  }
  ~DeviceAllocation() { driver_.cuMemFree(pointer_); }
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  CUdeviceptr pointer() const { return pointer_; }

 private:
  const CudaDriver& driver_;
  CUdeviceptr pointer_ = 0;
};

// One kernel of a cubin loaded into the current context: its module (unloaded on destruction),
// its function with the dynamic shared memory it needs opted in, and what the device makes of it
// (resident CTAs per SM, registers per thread). Every family's launcher holds one.
class LoadedCubin {
 public:
  // A DriverError if the device cannot run the cubin, or when no CTA of `threads` threads and
  // `dynamic_shared_bytes` fits on one SM (`label` names the variant in that message).
  LoadedCubin(const CudaDriver& driver, const std::vector<char>& cubin, const char* entry,
              int threads, int dynamic_shared_bytes, const std::string& label);
  // The first of `entries` the cubin has (a launch ABI and the older ones it still launches);
  // entry_index() says which. A DriverError (not found) when it has none of them.
  LoadedCubin(const CudaDriver& driver, const std::vector<char>& cubin,
              const std::vector<const char*>& entries, int threads, int dynamic_shared_bytes,
              const std::string& label);
  ~LoadedCubin();
  LoadedCubin(const LoadedCubin&) = delete;
  LoadedCubin& operator=(const LoadedCubin&) = delete;

  CUfunction function() const { return function_; }
  std::size_t entry_index() const { return entry_index_; }
  // Another entry of the same module (a family whose work is several kernels launched in turn),
  // with no dynamic shared memory: a DriverError when the cubin lacks it.
  CUfunction other_function(const char* entry) const;
  int blocks_per_sm() const { return blocks_per_sm_; }
  int registers_per_thread() const { return registers_; }

 private:
  const CudaDriver& driver_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::size_t entry_index_ = 0;
  int blocks_per_sm_ = 0;
  int registers_ = 0;
};

}  // namespace swr
