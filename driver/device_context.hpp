// Choosing the device to work on and holding its primary context for a scope.
#pragma once

#include <cuda.h>

namespace swr {

// Number of CUDA devices; 0 when there is no driver or no device (never throws).
int cuda_device_count();

// The device ordinal to use: $SWR_DEVICE when set (a UsageError when it is not a valid ordinal),
// else 0.
int selected_device_ordinal();

// Retains the primary context of a device, makes it current on this thread, and releases it on
// destruction. The primary context (not cuCtxCreate) is shared with anything else in the process.
// Throws NoDeviceError when there is no driver or the ordinal has no device.
class DeviceContext {
 public:
  DeviceContext();  // selected_device_ordinal()
  explicit DeviceContext(int ordinal);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  CUdevice device() const { return device_; }
  CUcontext context() const { return context_; }
  int ordinal() const { return ordinal_; }

  // Makes the context current on the calling thread (e.g. a worker thread).
  void make_current() const;

 private:
  int ordinal_ = 0;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

}  // namespace swr
