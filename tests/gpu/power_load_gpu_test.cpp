// The tuner's power load lasts about the time asked of it, and its tensor-core work is real: a
// load of twice the iterations takes about twice as long.
#include <gtest/gtest.h>

#include <memory>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tuner/power_load.hpp"

namespace swr {
namespace {

class PowerLoadOnGpu : public testing::Test {
 protected:
  void SetUp() override {
    SWR_REQUIRE_GPU();
    context_ = std::make_unique<DeviceContext>();
    const CudaDriver& driver = CudaDriver::get();
    SWR_CU(driver, cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
    SWR_CU(driver, cuEventCreate(&start_, CU_EVENT_DEFAULT));
    SWR_CU(driver, cuEventCreate(&stop_, CU_EVENT_DEFAULT));
    load_ = std::make_unique<PowerLoad>(*context_, stream_);
  }
  void TearDown() override {
    if (!context_) return;  // skipped: no device
    load_.reset();
    const CudaDriver& driver = CudaDriver::get();
    if (stop_) driver.cuEventDestroy(stop_);
    if (start_) driver.cuEventDestroy(start_);
    if (stream_) driver.cuStreamDestroy(stream_);
  }

  double timed_ms(double ms) {
    const CudaDriver& driver = CudaDriver::get();
    SWR_CU(driver, cuEventRecord(start_, stream_));
    load_->launch(stream_, ms);
    SWR_CU(driver, cuEventRecord(stop_, stream_));
    SWR_CU(driver, cuEventSynchronize(stop_));
    float elapsed = 0;
    SWR_CU(driver, cuEventElapsedTime(&elapsed, start_, stop_));
    return elapsed;
  }

  std::unique_ptr<DeviceContext> context_;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
  std::unique_ptr<PowerLoad> load_;
};

TEST_F(PowerLoadOnGpu, LastsAboutTheTimeAsked) {
  EXPECT_GT(load_->iteration_ms(), 0.0);
  // Its clock may come down under the load (the power cap): longer, never much shorter.
  const double twenty = timed_ms(20.0);
  const double eighty = timed_ms(80.0);
  EXPECT_GT(twenty, 15.0);
  EXPECT_LT(twenty, 60.0);
  EXPECT_GT(eighty, 60.0);
  EXPECT_LT(eighty, 240.0);
  EXPECT_GT(eighty / twenty, 3.0);
  EXPECT_LT(eighty / twenty, 5.5);
}

}  // namespace
}  // namespace swr
