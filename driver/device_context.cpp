#include "driver/device_context.hpp"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "driver/cuda_driver.hpp"
#include "swr/usage_error.hpp"

namespace swr {

int cuda_device_count() {
  const CudaDriver* driver = CudaDriver::try_get();
  if (driver == nullptr) return 0;
  int count = 0;
  if (driver->cuDeviceGetCount(&count) != CUDA_SUCCESS) return 0;
  return count;
}

int selected_device_ordinal() {
  const char* text = std::getenv("SWR_DEVICE");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  long ordinal = std::strtol(text, &end, 10);
  if (*end != '\0' || ordinal < 0 || ordinal > 1024) {
    throw UsageError(std::string("bad SWR_DEVICE '") + text +
                     "': allowed a device ordinal 0, 1, ...");
  }
  return static_cast<int>(ordinal);
}

DeviceContext::DeviceContext() : DeviceContext(selected_device_ordinal()) {}

DeviceContext::DeviceContext(int ordinal) : ordinal_(ordinal) {
  const CudaDriver& driver = CudaDriver::get();
  int count = 0;
  SWR_CU(driver, cuDeviceGetCount(&count));
  if (ordinal < 0 || ordinal >= count) {
    throw NoDeviceError("device " + std::to_string(ordinal) + " requested, " +
                        std::to_string(count) + " present");
  }
  SWR_CU(driver, cuDeviceGet(&device_, ordinal));
  SWR_CU(driver, cuDevicePrimaryCtxRetain(&context_, device_));
  try {
    SWR_CU(driver, cuCtxSetCurrent(context_));
  } catch (...) {
    driver.cuDevicePrimaryCtxRelease(device_);
    throw;
  }
}

DeviceContext::~DeviceContext() {
  const CudaDriver& driver = CudaDriver::get();
  // Leave no dangling current context on this thread (the release may destroy it), then drop
  // our reference.
  CUcontext current = nullptr;
  if (driver.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context_) {
    driver.cuCtxSetCurrent(nullptr);
  }
  driver.cuDevicePrimaryCtxRelease(device_);
}

void DeviceContext::make_current() const {
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuCtxSetCurrent(context_));
}

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
  CurrentContext current;
  SWR_CU(driver, cuCtxGetCurrent(&current.context));
  if (current.context == nullptr) {
    current.context = retained_primary_context(driver, selected_device_ordinal());
    SWR_CU(driver, cuCtxSetCurrent(current.context));
  }
  driver.check(driver.cuCtxGetId(current.context, &current.id), "cuCtxGetId");
  driver.check(driver.cuCtxGetDevice(&current.device, current.context), "cuCtxGetDevice");
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
