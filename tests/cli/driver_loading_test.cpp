// The driver is loaded at run time: on a machine without one, asking for it is a NoDeviceError
// (never a crash), and everything built on it reports "no device" the same way.
#include <gtest/gtest.h>

#include <cstdlib>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "swr/usage_error.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr {
namespace {

TEST(DriverLoading, MissingDriverIsNoDeviceError) {
  if (CudaDriver::try_get() != nullptr) GTEST_SKIP() << "a CUDA driver is present";
  try {
    CudaDriver::get();
    FAIL() << "CudaDriver::get() returned without a driver";
  } catch (const NoDeviceError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("no CUDA driver/device found: ", 0), 0u)
        << error.what();
  }
  // The failure is remembered, not retried into a different state.
  EXPECT_THROW(CudaDriver::get(), NoDeviceError);
  EXPECT_FALSE(CudaDriver::load_error().empty());
  EXPECT_EQ(cuda_device_count(), 0);
  EXPECT_FALSE(detect_present_gpu().has_value());
  EXPECT_FALSE(no_present_gpu_reason().empty());
  EXPECT_THROW(DeviceContext context, NoDeviceError);
  EXPECT_THROW(resolve_gpu("auto"), NoDeviceError);
}

TEST(DriverLoading, PresentDriverGivesEveryEntryPoint) {
  const CudaDriver* driver = CudaDriver::try_get();
  if (driver == nullptr) GTEST_SKIP() << "no CUDA driver: " << CudaDriver::load_error();
  EXPECT_NE(driver->cuLaunchKernel, nullptr);
  EXPECT_NE(driver->cuCtxSynchronize, nullptr);
  EXPECT_NE(driver->cuEventElapsedTime, nullptr);
  EXPECT_TRUE(CudaDriver::load_error().empty());
  if (cuda_device_count() == 0) GTEST_SKIP() << "driver without a device";
  const std::optional<GpuProfile> present = detect_present_gpu();
  ASSERT_TRUE(present.has_value());
  EXPECT_GT(present->sm_count, 0);
  EXPECT_GT(present->l2_bytes, 0);
  EXPECT_GT(present->shared_memory_per_block_optin, 0);
  EXPECT_EQ(present->arch.rfind("sm_", 0), 0u);
  DeviceContext context;
  SWR_CU(*driver, cuCtxSynchronize(context.context()));
}

TEST(GpuResolution, NamesAreCaseInsensitiveAndUnknownOnesAreUsageErrors) {
  EXPECT_EQ(resolve_gpu("GB10").arch, "sm_121");
  EXPECT_EQ(resolve_gpu("h200").sm_count, 132);
  try {
    resolve_gpu("a100");
    FAIL() << "a100 resolved";
  } catch (const UsageError& error) {
    EXPECT_STREQ(error.what(), "unknown GPU 'a100': allowed gb10, h100, h200, auto");
  }
}

TEST(GpuResolution, BadDeviceOrdinalIsUsageError) {
  ::setenv("SWR_DEVICE", "first", 1);
  EXPECT_THROW(selected_device_ordinal(), UsageError);
  ::setenv("SWR_DEVICE", "1", 1);
  EXPECT_EQ(selected_device_ordinal(), 1);
  ::unsetenv("SWR_DEVICE");
  EXPECT_EQ(selected_device_ordinal(), 0);
}

}  // namespace
}  // namespace swr
