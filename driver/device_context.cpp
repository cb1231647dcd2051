#include "driver/device_context.hpp"

#include <cstdlib>
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

}  // namespace swr
