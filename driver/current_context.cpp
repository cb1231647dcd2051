#include "driver/current_context.hpp"

#include <map>
#include <mutex>
#include <string>

#include "driver/context_driver.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"

namespace swr {
namespace {

// Primary contexts this process retained for threads that had no context, by ordinal; never
// released, so that pointers handed to the user stay valid until exit.
CUcontext retained_primary_context(const CudaDriver& driver, int ordinal) {
  static std::mutex mutex;
  static std::map<int, CUcontext> retained;
  std::lock_guard lock(mutex);
  if (auto known = retained.find(ordinal); known != retained.end()) return known->second;
  int count = 0;
  SWR_CU(driver, cuDeviceGetCount(&count));
  if (ordinal >= count) {
    throw NoDeviceError("device " + std::to_string(ordinal) + " requested ($SWR_DEVICE), " +
                        std::to_string(count) + " present");
  }
  CUdevice device = 0;
  SWR_CU(driver, cuDeviceGet(&device, ordinal));
  CUcontext context = nullptr;
  SWR_CU(driver, cuDevicePrimaryCtxRetain(&context, device));
  retained.emplace(ordinal, context);
  return context;
}

}  // namespace

CurrentContext current_context() {
  const CudaDriver& driver = CudaDriver::get();
  const ContextDriver& context_driver = ContextDriver::get();
  CurrentContext current;
  SWR_CU(driver, cuCtxGetCurrent(&current.context));
  if (current.context == nullptr) {
    current.context = retained_primary_context(driver, selected_device_ordinal());
    SWR_CU(driver, cuCtxSetCurrent(current.context));
  }
  driver.check(context_driver.cuCtxGetId(current.context, &current.id), "cuCtxGetId");
  driver.check(context_driver.cuCtxGetDevice(&current.device, current.context), "cuCtxGetDevice");
  return current;
}

ScopedContext::ScopedContext(CUcontext context) {
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuCtxGetCurrent(&previous_));
  if (previous_ != context) {
    SWR_CU(driver, cuCtxSetCurrent(context));
    switched_ = true;
  }
}

ScopedContext::~ScopedContext() {
  if (switched_) CudaDriver::get().cuCtxSetCurrent(previous_);
}

}  // namespace swr
