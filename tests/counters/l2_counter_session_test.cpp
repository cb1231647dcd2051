// The profiling gate without a GPU, the choice of the measured range among a pass's ranges, and
// the hints for the errors a user can fix.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "driver/device_context.hpp"
#include "tuner/counters/cupti_library.hpp"
#include "tuner/counters/l2_counter_session.hpp"

namespace swr {
namespace {

TEST(L2CounterSessionWithoutDriver, SaysProfilingIsUnavailableOnceAndNeverLaunches) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  std::vector<std::string> notices;
  L2CounterSession session(nullptr, nullptr,
                           [&](const std::string& line) { notices.push_back(line); });
  EXPECT_FALSE(session.available());
  EXPECT_EQ(session.unavailable_reason().rfind("profiling unavailable: ", 0), 0u)
      << session.unavailable_reason();
  // The gate stops at the driver, before any CUPTI call (which would crash without one).
  EXPECT_NE(session.unavailable_reason().find("libcuda"), std::string::npos)
      << session.unavailable_reason();
  EXPECT_EQ(session.passes(), 0u);
  EXPECT_TRUE(session.metric_set_name().empty());

  int launches = 0;
  for (int run = 0; run < 3; ++run) {
    const L2Counters counters = session.measure(nullptr, [&](CUstream) { ++launches; });
    EXPECT_TRUE(counters.empty());
  }
  EXPECT_EQ(launches, 0);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices.front(), session.unavailable_reason());
}

TEST(SelectMeasuredRange, SkipsTheFlushByName) {
  EXPECT_EQ(select_measured_range({"swr_l2_flush", "swr_attention_forward"}, ""), 1u);
  EXPECT_EQ(select_measured_range({"read_kernel", "swr_l2_flush"}, ""), 0u);
}

TEST(SelectMeasuredRange, FallsBackToLaunchOrderWhenNamesSayNothing) {
  // The flush is always the first launch of a pass.
  EXPECT_EQ(select_measured_range({"0", "1"}, ""), 1u);
  EXPECT_EQ(select_measured_range({"", "", ""}, ""), 2u);
}

TEST(SelectMeasuredRange, PrefersTheNamedKernel) {
  const std::vector<std::string> names = {"swr_l2_flush", "swr_attention_forward", "memset"};
  EXPECT_EQ(select_measured_range(names, "swr_attention_forward"), 1u);
  EXPECT_EQ(select_measured_range(names, ""), 2u);
}

TEST(SelectMeasuredRange, AMissingNamedKernelIsAnErrorNotAnotherKernelsCounters) {
  const std::vector<std::string> names = {"swr_l2_flush", "swr_attention_forward", "memset"};
  try {
    select_measured_range(names, "not_launched");
    FAIL() << "another kernel's range was taken for not_launched";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("no profiler range for kernel 'not_launched'"),
              std::string::npos)
        << error.what();
  }
  // Ranges named by launch number say nothing about kernels: launch order decides.
  EXPECT_EQ(select_measured_range({"0", "1", "2"}, "swr_attention_forward"), 2u);
}

TEST(SelectMeasuredRange, NothingButTheFlushIsNoMeasurement) {
  EXPECT_FALSE(select_measured_range({"swr_l2_flush"}, "").has_value());
  EXPECT_FALSE(select_measured_range({}, "").has_value());
}

TEST(DescribeProfilingError, PermissionErrorsCarryTheFix) {
  const std::string text = describe_profiling_error(
      CuptiError("cuptiRangeProfilerEnable", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,
                 "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)"));
  EXPECT_NE(text.find("cuptiRangeProfilerEnable"), std::string::npos) << text;
  EXPECT_NE(text.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << text;
  EXPECT_NE(text.find("ERR_NVGPUCTRPERM"), std::string::npos) << text;
}

TEST(DescribeProfilingError, AnotherProfilerIsNamed) {
  const std::string text = describe_profiling_error(
      CuptiError("cuptiProfilerInitialize", CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "39"));
  EXPECT_NE(text.find("ncu"), std::string::npos) << text;
}

TEST(DescribeProfilingError, OtherErrorsKeepTheirText) {
  const std::string text = describe_profiling_error(
      CuptiError("cuptiDeviceGetChipName", CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN (999)"));
  EXPECT_EQ(text, "cuptiDeviceGetChipName failed: CUPTI_ERROR_UNKNOWN (999)");
}

}  // namespace
}  // namespace swr
