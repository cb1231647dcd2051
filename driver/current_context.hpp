// The CUDA context the runtime works in: the calling thread's current one, as a program using the
// runtime API or the driver API set it; when the thread has none, the primary context of device
// $SWR_DEVICE (else 0), retained once for the life of the process (as the CUDA runtime does) and
// made current on the thread.
#pragma once

#include <cuda.h>

namespace swr {

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
