// CUDA contexts: choosing the device to work on and holding its primary context for a scope
// (the tuner), and the context a user's thread has current (the runtime).
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

// The CUDA context the runtime works in: the calling thread's current one, as a program using the
// runtime API or the driver API set it; when the thread has none, the primary context of device
// $SWR_DEVICE (else 0), retained once for the life of the process (as the CUDA runtime does) and
// made current on the thread.
struct CurrentContext {
  CUcontext context = nullptr;
  unsigned long long id = 0;  // unique in the process: a context's pointer may be reused
  CUdevice device = 0;
};

// Throws NoDeviceError when there is no driver or device, UsageError for a bad $SWR_DEVICE.
CurrentContext current_context();

// Makes `context` current on this thread for a scope and restores what was current before.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext context);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

}  // namespace swr
