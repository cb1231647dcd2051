// CUPTI's host API on a machine without a driver: the chips' metric sets are accepted and need the
// pass counts the tuner ran on the H200 (counter_passes in bench/results/l2-sweep-h200/*.json).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tuner/counters/cupti_library.hpp"
#include "tuner/counters/l2_metric_set.hpp"

namespace swr {
namespace {

const CuptiLibrary& cupti() {
  const CuptiLibrary* library = CuptiLibrary::try_get();
  if (library == nullptr) throw std::runtime_error(CuptiLibrary::load_error());
  return *library;
}

TEST(CuptiHost, LoadsTheLibrary) {
  ASSERT_NE(CuptiLibrary::try_get(), nullptr) << CuptiLibrary::load_error();
  EXPECT_TRUE(CuptiLibrary::load_error().empty());
  EXPECT_NE(CuptiLibrary::loaded_path().find("libcupti.so.13"), std::string::npos);
}

TEST(CuptiHost, KnowsTheTargetChips) {
  const std::vector<std::string> chips = cupti_supported_chips(cupti());
  for (const char* chip : {"GH100", "GB100", "GB20B"}) {
    EXPECT_NE(std::find(chips.begin(), chips.end(), chip), chips.end()) << chip;
  }
}

struct ChipExpectation {
  const char* chip;
  const char* metric_set;
  std::size_t passes;
};

class MetricSetOnChip : public testing::TestWithParam<ChipExpectation> {};

TEST_P(MetricSetOnChip, IsAcceptedWithItsPassCount) {
  const ChipExpectation& expected = GetParam();
  const L2MetricConfiguration configured = configure_l2_metrics(cupti(), expected.chip, {});
  EXPECT_EQ(configured.set.name, expected.metric_set);
  ASSERT_NE(configured.configuration, nullptr);
  EXPECT_EQ(configured.configuration->passes(), expected.passes);
  EXPECT_FALSE(configured.configuration->config_image().empty());
  EXPECT_EQ(configured.configuration->metric_names(), configured.set.metric_names());
}

// GH100/GB100: tex sectors + misses + hit rate + DRAM read/write in 3 passes. GB20B (GB10): no
// dram__ metrics, the fill-sector proxy instead, also 3. GB202 (sm_120) names DRAM traffic
// dram__bytes_op_*: the fallback must find it.
INSTANTIATE_TEST_SUITE_P(Chips, MetricSetOnChip,
                         testing::Values(ChipExpectation{"GH100", "dram_bytes", 3},
                                         ChipExpectation{"GB100", "dram_bytes", 3},
                                         ChipExpectation{"GB20B", "l2_fill_sectors", 3},
                                         ChipExpectation{"GB202", "dram_op_bytes", 3}),
                         [](const auto& info) { return std::string(info.param.chip); });

TEST(CuptiHost, GB20BHasNoDramCounters) {
  EXPECT_THROW(MetricConfiguration(cupti(), "GB20B", {"dram__bytes_read.sum"}), CuptiError);
}

TEST(CuptiHost, RejectsAnUnknownMetricByName) {
  try {
    MetricConfiguration(cupti(), "GH100", {"lts__t_sectors_srcunit_tex.sum", "lts__no_such.sum"});
    FAIL() << "an unknown metric was accepted";
  } catch (const CuptiError& error) {
    EXPECT_TRUE(error.result() == CUPTI_ERROR_INVALID_PARAMETER ||
                error.result() == CUPTI_ERROR_INVALID_METRIC_NAME)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("cuptiProfilerHostConfigAddMetrics"),
              std::string::npos)
        << error.what();
  }
}

TEST(CuptiHost, RejectsAnUnknownChip) {
  try {
    configure_l2_metrics(cupti(), "GX999", {});
    FAIL() << "an unknown chip was accepted";
  } catch (const CuptiError& error) {
    EXPECT_EQ(error.result(), CUPTI_ERROR_INVALID_CHIP_NAME) << error.what();
  }
}

TEST(CuptiHost, OneCounterNeedsOnePass) {
  const MetricConfiguration configuration(cupti(), "GH100",
                                          {"lts__t_sectors_srcunit_tex_lookup_miss.sum"});
  EXPECT_EQ(configuration.passes(), 1u);
}

}  // namespace
}  // namespace swr
