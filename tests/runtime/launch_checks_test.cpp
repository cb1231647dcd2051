// What is refused before a launch, checked without a GPU: cubin archs a device cannot run,
// variants compiled for another head dim, dtype or mask, null tensors, NVRTC turned off; and the
// device names the catalog is asked with.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "driver/cuda_driver.hpp"
#include "driver/device_identity.hpp"
#include "runtime/kernel_runtime.hpp"
#include "swr/attention.hpp"
#include "swr/device_buffer.hpp"
#include "swr/gemm.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

TEST(CubinArch, ParsesTheArchsCuda13CompilesFor) {
  const std::optional<CubinArch> hopper = parse_cubin_arch("sm_90a");
  ASSERT_TRUE(hopper);
  EXPECT_EQ(hopper->major, 9);
  EXPECT_EQ(hopper->minor, 0);
  EXPECT_EQ(hopper->variant, 'a');
  const std::optional<CubinArch> spark = parse_cubin_arch("sm_121");
  ASSERT_TRUE(spark);
  EXPECT_EQ(spark->major, 12);
  EXPECT_EQ(spark->minor, 1);
  for (const char* unknown : {"sm_70", "sm_999", "sm_9", "compute_90", "sm_90x", "", "sm_", "90"}) {
    EXPECT_FALSE(parse_cubin_arch(unknown)) << unknown;
  }
}

TEST(CubinArch, SaysWhichDevicesACubinRunsOn) {
  EXPECT_EQ(cubin_arch_mismatch("sm_90a", 9, 0), "");
  EXPECT_EQ(cubin_arch_mismatch("sm_90", 9, 0), "");
  EXPECT_EQ(cubin_arch_mismatch("sm_80", 8, 6), "");     // same major, newer minor
  EXPECT_EQ(cubin_arch_mismatch("sm_120f", 12, 1), "");  // the family
  EXPECT_EQ(cubin_arch_mismatch("sm_121", 12, 1), "");
  EXPECT_NE(cubin_arch_mismatch("sm_86", 8, 0), "");  // older minor
  EXPECT_NE(cubin_arch_mismatch("sm_80", 9, 0), "");  // machine code never crosses majors
  EXPECT_NE(cubin_arch_mismatch("sm_121", 12, 0), "");
  const std::string refused = cubin_arch_mismatch("sm_90a", 12, 1);
  EXPECT_NE(refused.find("sm_90a runs on compute capability 9.0 only"), std::string::npos)
      << refused;
  EXPECT_NE(refused.find("12.1"), std::string::npos) << refused;
  EXPECT_NE(cubin_arch_mismatch("sm_42", 9, 0).find("not a known cubin arch"), std::string::npos);
}

TEST(LaunchChecks, RefusesAVariantCompiledForAnotherShape) {
  TunedKernel kernel;
  kernel.config_key = "m128n64w8s2-cyclic-grid-head_major";
  kernel.problem = attention_shape(8, 1, 4096, 64);
  EXPECT_EQ(variant_mismatch(kernel, attention_shape(2, 3, 999, 64)), "");
  const std::string head_dim = variant_mismatch(kernel, attention_shape(8, 1, 4096, 128));
  EXPECT_NE(head_dim.find("head dim 64, asked 128"), std::string::npos) << head_dim;
  EXPECT_NE(variant_mismatch(kernel, attention_shape(8, 1, 4096, 64, true)).find("asked causal"),
            std::string::npos);
  EXPECT_NE(variant_mismatch(kernel, attention_shape(8, 1, 4096, 64, false, DataType::bf16))
                .find("dtype f16, asked bf16"),
            std::string::npos);
}

TEST(LaunchChecks, RefusesAGemmVariantCompiledForAnotherDtype) {
  TunedGemmKernel kernel;
  kernel.config_key = "m128n128k32w2x4s3-grid-swz0";
  kernel.problem = gemm_shape(4096, 4096, 4096);
  // m, n and k are launch arguments: any size of the same dtype runs.
  EXPECT_EQ(variant_mismatch(kernel, gemm_shape(333, 200, 264)), "");
  const std::string dtype = variant_mismatch(kernel, gemm_shape(4096, 4096, 4096, DataType::bf16));
  EXPECT_NE(dtype.find("m128n128k32w2x4s3-grid-swz0 is compiled for dtype f16, asked bf16"),
            std::string::npos)
      << dtype;
}

TEST(LaunchChecks, RefusesNullTensors) {
  EXPECT_EQ(tensor_mismatch(AttentionTensors{1, 2, 3, 4}), "");
  EXPECT_EQ(tensor_mismatch(AttentionTensors{1, 0, 3, 0}), "null device pointer for k, o");
  EXPECT_EQ(tensor_mismatch(GemmTensors{1, 2, 3}), "");
  EXPECT_EQ(tensor_mismatch(GemmTensors{0, 2, 0}), "null device pointer for a, c");
}

TEST(LaunchChecks, NvrtcCanBeTurnedOff) {
  AttentionOptions options;
  unsetenv("SWR_RUNTIME_NVRTC");
  EXPECT_TRUE(nvrtc_allowed(options));
  setenv("SWR_RUNTIME_NVRTC", "0", 1);
  EXPECT_FALSE(nvrtc_allowed(options));
  setenv("SWR_RUNTIME_NVRTC", "1", 1);
  EXPECT_TRUE(nvrtc_allowed(options));
  unsetenv("SWR_RUNTIME_NVRTC");
  options.allow_nvrtc = false;
  EXPECT_FALSE(nvrtc_allowed(options));
}

TEST(DeviceIdentity, NamesDevicesAsTheTunerDoes) {
  EXPECT_EQ(gpu_name_for_device("NVIDIA H200", 9, 0), "h200");
  EXPECT_EQ(gpu_name_for_device("NVIDIA H100 80GB HBM3", 9, 0), "h100");
  EXPECT_EQ(gpu_name_for_device("NVIDIA GB10", 12, 1), "gb10");
  EXPECT_EQ(gpu_name_for_device("NVIDIA RTX A6000", 8, 6), "nvidia-rtx-a6000");
  EXPECT_EQ(gpu_name_for_device("--", 8, 6), "unknown-gpu");
}

TEST(AttentionWithoutDevice, IsRefusedWithTheReason) {
  if (CudaDriver::try_get() != nullptr && cuda_device_present()) {
    GTEST_SKIP() << "a device is present: the GPU tests cover launching";
  }
  std::string why;
  EXPECT_FALSE(cuda_device_present(&why));
  EXPECT_FALSE(why.empty());
  // The catalog is not needed to see that there is no device, but one is required to build.
  swr::testing::TemporaryDirectory directory;
  TunedDatabase tuned(directory.path() / "results.db");
  tuned.add(attention_shape(1, 1, 1024, 64), "m64n64w4s2-cyclic-dynamic-heads_interleaved", 0.1);
  const Attention attention(TunedCatalog::open_database(tuned.path()));
  try {
    attention.run(attention_shape(1, 1, 1024, 64), {1, 2, 3, 4});
    FAIL() << "expected NoDeviceError";
  } catch (const NoDeviceError& error) {
    EXPECT_NE(std::string(error.what()).find("no CUDA driver/device found"), std::string::npos);
  }
  EXPECT_THROW(attention.run(attention_shape(1, 1, 1024, 64), {1, 0, 3, 4}), AttentionRefused);
}

TEST(GemmWithoutDevice, IsRefusedWithTheReason) {
  if (CudaDriver::try_get() != nullptr && cuda_device_present()) {
    GTEST_SKIP() << "a device is present: the GPU tests cover launching";
  }
  swr::testing::TemporaryDirectory directory;
  TunedDatabase tuned(directory.path() / "results.db");
  tuned.add(gemm_shape(1024, 1024, 1024), "m128n128k32w2x4s3-grid-swz0", 0.1);
  const Gemm gemm(TunedCatalog::open_database(tuned.path()));
  try {
    gemm.run(gemm_shape(1000, 1016, 264), {1, 2, 3});
    FAIL() << "expected NoDeviceError";
  } catch (const NoDeviceError& error) {
    EXPECT_NE(std::string(error.what()).find("no CUDA driver/device found"), std::string::npos);
  }
  EXPECT_THROW(gemm.plan(gemm_shape(1000, 1016, 264)), NoDeviceError);
  // Refused before the device is even looked for: null pointers, a shape no kernel can run.
  EXPECT_THROW(gemm.run(gemm_shape(1000, 1016, 264), {1, 0, 3}), GemmRefused);
  EXPECT_THROW(gemm.run(gemm_shape(1000, 1001, 264), {1, 2, 3}), UsageError);
}

}  // namespace
}  // namespace swr::test
