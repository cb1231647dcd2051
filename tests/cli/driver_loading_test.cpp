// The driver is loaded at run time: on a machine without one, asking for it is a NoDeviceError
// (never a crash), and everything built on it reports "no device" the same way.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "driver/device_presence.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/gpu/gpu_test_support.hpp"
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
  SWR_REQUIRE_GPU();
  const CudaDriver* driver = CudaDriver::try_get();
  ASSERT_NE(driver, nullptr);
  EXPECT_NE(driver->cuLaunchKernel, nullptr);
  EXPECT_NE(driver->cuCtxSynchronize, nullptr);
  EXPECT_NE(driver->cuEventElapsedTime, nullptr);
  EXPECT_TRUE(CudaDriver::load_error().empty());
  const std::optional<GpuProfile> present = detect_present_gpu();
  ASSERT_TRUE(present.has_value());
  EXPECT_GT(present->sm_count, 0);
  EXPECT_GT(present->l2_bytes, 0);
  EXPECT_GT(present->shared_memory_per_block_optin, 0);
  EXPECT_EQ(present->arch.rfind("sm_", 0), 0u);
  DeviceContext context;
  SWR_CU(*driver, cuCtxSynchronize(context.context()));
}

// The hardware check reads only the file system, so a fake root shows each way it can answer.
TEST(NvidiaHardwarePresence, ReadsTheKernelModulesGpuListAndTheGpuDeviceNodes) {
  testing::TemporaryDirectory root;
  EXPECT_FALSE(nvidia_hardware_present(root.path()));
  const std::filesystem::path gpus = root.path() / "proc/driver/nvidia/gpus";
  std::filesystem::create_directories(gpus);
  EXPECT_FALSE(nvidia_hardware_present(root.path())) << "the module is loaded but lists no GPU";
  // Control and UVM nodes exist without a GPU; a regular file is no device node.
  std::filesystem::create_directories(root.path() / "dev");
  for (const char* name : {"nvidiactl", "nvidia-uvm", "nvidia0"}) {
    std::ofstream(root.path() / "dev" / name) << "";
  }
  EXPECT_FALSE(nvidia_hardware_present(root.path()));
  std::filesystem::create_directories(gpus / "0000:4b:00.0");
  EXPECT_TRUE(nvidia_hardware_present(root.path()));
}

TEST(NvidiaHardwarePresence, AGpuWithoutAUsableDriverIsNotNoGpu) {
  // Where this machine has no NVIDIA hardware the driver cannot be usable either; where it has,
  // the reason is empty exactly when the driver counts a device.
  const std::string reason = driver_unusable_reason();
  EXPECT_EQ(reason.empty(), cuda_device_count() > 0) << reason;
  if (!nvidia_hardware_present()) EXPECT_FALSE(reason.empty());
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
