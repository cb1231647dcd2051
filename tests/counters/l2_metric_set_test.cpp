// How metric values become the L2 figures, per chip family.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "tuner/counters/l2_metric_set.hpp"

namespace swr {
namespace {

TEST(L2MetricSet, HopperAndBlackwellReadTheDramCounters) {
  for (const char* chip : {"GH100", "GB100", "AD102"}) {
    const L2MetricSet set = l2_metric_sets_for_chip(chip).front();
    EXPECT_EQ(set.name, "dram_bytes") << chip;
    EXPECT_EQ(set.metric_names(),
              (std::vector<std::string>{
                  "lts__t_sectors_srcunit_tex.sum", "lts__t_sectors_srcunit_tex_lookup_miss.sum",
                  "lts__t_sector_hit_rate.pct", "dram__bytes_read.sum", "dram__bytes_write.sum"}));
  }
}

TEST(L2MetricSet, EvaluatesEachFigureFromItsMetric) {
  const L2MetricSet set = l2_metric_sets_for_chip("GH100").front();
  const L2Counters counters = set.evaluate({558080, 524288, 8.75, 16.78e6, 2.4e6});
  EXPECT_EQ(counters.l2_sectors_from_tex, 558080);
  EXPECT_EQ(counters.l2_sector_misses_from_tex, 524288);
  EXPECT_EQ(counters.l2_hit_rate_percent, 8.75);
  EXPECT_EQ(counters.dram_bytes_read, 16.78e6);
  EXPECT_EQ(counters.dram_bytes_written, 2.4e6);
  EXPECT_EQ(counters.dram_source, "dram__bytes");
  EXPECT_FALSE(counters.empty());
}

TEST(L2MetricSet, GB10CountsFilledSectorsAsDramReads) {
  const std::vector<L2MetricSet> sets = l2_metric_sets_for_chip("GB20B");
  ASSERT_FALSE(sets.empty());
  const L2MetricSet& set = sets.front();
  EXPECT_EQ(set.name, "l2_fill_sectors");
  for (const std::string& name : set.metric_names()) {
    EXPECT_EQ(name.rfind("dram__", 0), std::string::npos) << name;
  }
  // tex sectors, tex misses, hit rate, fill sysmem, fill device
  const L2Counters counters = set.evaluate({1000, 600, 40, 500, 100});
  EXPECT_EQ(counters.dram_bytes_read, (500 + 100) * 32.0);
  EXPECT_FALSE(counters.dram_bytes_written.has_value());
  EXPECT_EQ(counters.dram_source, "l2_fill_sectors");
  EXPECT_EQ(counters.l2_sector_misses_from_tex, 600);
}

TEST(L2MetricSet, EveryChipEndsWithTheL2OnlyFallback) {
  for (const char* chip : {"GH100", "GB20B", "GB202", "unknown"}) {
    const std::vector<L2MetricSet> sets = l2_metric_sets_for_chip(chip);
    ASSERT_FALSE(sets.empty());
    EXPECT_EQ(sets.back().name, "l2_only") << chip;
    EXPECT_TRUE(sets.back().dram_source.empty());
    const L2Counters counters = sets.back().evaluate({10, 5, 50});
    EXPECT_FALSE(counters.dram_bytes_read.has_value());
    EXPECT_EQ(counters.l2_hit_rate_percent, 50);
  }
}

TEST(L2MetricSet, MetricNamesAreDistinct) {
  for (const L2MetricSet& set : l2_metric_sets_for_chip("GH100")) {
    const std::vector<std::string> names = set.metric_names();
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << set.name;
  }
}

TEST(L2MetricSet, NotANumberIsMissingNotAValue) {
  const L2MetricSet set = l2_metric_sets_for_chip("GH100").front();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const L2Counters counters = set.evaluate({0, 0, nan, 0, 0});
  EXPECT_FALSE(counters.l2_hit_rate_percent.has_value());
  EXPECT_EQ(counters.l2_sectors_from_tex, 0);
}

TEST(L2MetricSet, RejectsAValueCountThatDoesNotMatch) {
  const L2MetricSet set = l2_metric_sets_for_chip("GH100").front();
  EXPECT_THROW(set.evaluate({1, 2, 3}), std::invalid_argument);
}

TEST(L2Counters, DefaultIsEmpty) {
  EXPECT_TRUE(L2Counters{}.empty());
}

}  // namespace
}  // namespace swr
