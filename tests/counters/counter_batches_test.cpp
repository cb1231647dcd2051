// Batched L2 counters without a GPU: how launches are grouped into profiling sessions, what a
// launch that fails does to its batch, the fallback to one session per launch, and which ranges of
// a batched session belong to which launch.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "tuner/counters/counter_batches.hpp"

namespace swr {
namespace {

// A profiler that records its sessions: launch i's "misses" are i + 1; launches named in
// `failing` throw from the batch (as a launch error would); `unattributable` sessions of more
// than one launch cannot tell their ranges apart; sessions of more than `room_for` launches drop
// ranges; after `unavailable_after` sessions the
// profiler becomes unavailable (a busy profiler).
class FakeProfiler : public BatchProfiler {
 public:
  std::size_t max_launches = 4;
  std::set<std::string> failing;
  bool unattributable = false;
  std::size_t room_for = 1000;
  std::optional<std::size_t> unavailable_after;
  std::vector<std::vector<std::string>> sessions;  // the kernel names of each session

  bool available() const override {
    return !unavailable_after || sessions.size() < *unavailable_after;
  }
  std::size_t max_launches_per_session() const override { return max_launches; }

  std::vector<L2Counters> profile_batch(CUstream,
                                        const std::vector<BatchLaunch>& launches) override {
    EXPECT_LE(launches.size(), max_launches);
    std::vector<std::string>& names = sessions.emplace_back();
    for (const BatchLaunch& launch : launches) names.push_back(launch.kernel_name);
    for (std::size_t i = 0; i < launches.size(); ++i) {
      if (failing.count(launches[i].kernel_name) > 0) {
        throw BatchLaunchFailed(i, "launch of " + launches[i].kernel_name + " failed");
      }
    }
    if (unattributable) throw std::runtime_error("3 unnamed ranges for 2 launches");
    if (launches.size() > room_for) throw RangesDropped("4 profiler ranges dropped");
    std::vector<L2Counters> counters;
    for (const BatchLaunch& launch : launches) counters.push_back(counters_of(launch));
    return counters;
  }
  L2Counters profile_one(CUstream, const BatchLaunch& launch) override {
    sessions.push_back({launch.kernel_name});
    if (failing.count(launch.kernel_name) > 0) {
      throw std::runtime_error("launch of " + launch.kernel_name + " failed");
    }
    return counters_of(launch);
  }
  static L2Counters counters_of(const BatchLaunch& launch) {
    L2Counters counters;
    counters.l2_sector_misses_from_tex = std::stod(launch.kernel_name.substr(1)) + 1;
    return counters;
  }
};

std::vector<BatchLaunch> launches(std::size_t count) {
  std::vector<BatchLaunch> result;
  for (std::size_t i = 0; i < count; ++i)
    result.push_back({[](CUstream) {}, "k" + std::to_string(i)});
  return result;
}

void expect_own_counters(const BatchedCounters& result, const std::set<std::size_t>& without) {
  for (std::size_t i = 0; i < result.counters.size(); ++i) {
    if (without.count(i) > 0) {
      EXPECT_TRUE(result.counters[i].empty()) << i;
    } else {
      ASSERT_TRUE(result.counters[i].l2_sector_misses_from_tex) << i;
      EXPECT_EQ(*result.counters[i].l2_sector_misses_from_tex, static_cast<double>(i + 1)) << i;
      EXPECT_EQ(result.failed[i], "") << i;
    }
  }
}

TEST(PlanCounterSessions, EvenSessionsInOrderOfAtMostTheMaximum) {
  using Sessions = std::vector<std::vector<std::size_t>>;
  EXPECT_EQ(plan_counter_sessions(0, 4), Sessions{});
  EXPECT_EQ(plan_counter_sessions(3, 4), (Sessions{{0, 1, 2}}));
  EXPECT_EQ(plan_counter_sessions(4, 4), (Sessions{{0, 1, 2, 3}}));
  EXPECT_EQ(plan_counter_sessions(5, 4), (Sessions{{0, 1, 2}, {3, 4}}));
  EXPECT_EQ(plan_counter_sessions(3, 1), (Sessions{{0}, {1}, {2}}));
  EXPECT_EQ(plan_counter_sessions(2, 0), (Sessions{{0}, {1}}));  // 0 reads as 1
  std::size_t covered = 0;
  for (const auto& session : plan_counter_sessions(312, 32)) {
    EXPECT_LE(session.size(), 32u);
    EXPECT_GE(session.size(), 31u);
    for (std::size_t position : session) EXPECT_EQ(position, covered++);
  }
  EXPECT_EQ(covered, 312u);
}

TEST(CollectCountersInBatches, OneSessionPerBatchEachLaunchItsOwnCounters) {
  FakeProfiler profiler;
  const BatchedCounters result = collect_counters_in_batches(profiler, nullptr, launches(10));
  EXPECT_EQ(result.sessions, 3u);
  ASSERT_EQ(profiler.sessions.size(), 3u);
  EXPECT_EQ(profiler.sessions[0], (std::vector<std::string>{"k0", "k1", "k2", "k3"}));
  EXPECT_EQ(profiler.sessions[2], (std::vector<std::string>{"k7", "k8", "k9"}));
  expect_own_counters(result, {});
}

TEST(CollectCountersInBatches, SessionSizeOneIsTheOldOneSessionPerVariantPath) {
  FakeProfiler profiler;
  const BatchedCounters result = collect_counters_in_batches(profiler, nullptr, launches(5), 1);
  EXPECT_EQ(result.sessions, 5u);
  EXPECT_EQ(profiler.sessions.size(), 5u);
  expect_own_counters(result, {});
}

TEST(CollectCountersInBatches, AFailingLaunchLosesOnlyItsOwnCountersAndItsBatchRunsAgain) {
  FakeProfiler profiler;
  profiler.failing = {"k1", "k6"};
  const BatchedCounters result = collect_counters_in_batches(profiler, nullptr, launches(8));
  // Batch {0..3} fails at k1, runs again as {0, 2, 3}; batch {4..7} fails at k6, then {4, 5, 7}.
  ASSERT_EQ(profiler.sessions.size(), 4u);
  EXPECT_EQ(profiler.sessions[1], (std::vector<std::string>{"k0", "k2", "k3"}));
  EXPECT_EQ(profiler.sessions[3], (std::vector<std::string>{"k4", "k5", "k7"}));
  expect_own_counters(result, {1, 6});
  EXPECT_EQ(result.failed[1], "launch of k1 failed");
  EXPECT_EQ(result.failed[6], "launch of k6 failed");
}

TEST(CollectCountersInBatches, EveryLaunchOfABatchFailingLeavesNoneAndNoEndlessRetry) {
  FakeProfiler profiler;
  profiler.failing = {"k0", "k1", "k2"};
  const BatchedCounters result = collect_counters_in_batches(profiler, nullptr, launches(3));
  EXPECT_EQ(profiler.sessions.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_FALSE(result.failed[i].empty()) << i;
}

TEST(CollectCountersInBatches, UnattributableRangesFallBackToOneSessionPerLaunch) {
  FakeProfiler profiler;
  profiler.unattributable = true;
  const BatchedCounters result = collect_counters_in_batches(profiler, nullptr, launches(3));
  ASSERT_EQ(profiler.sessions.size(), 4u);  // the batch, then each alone
  EXPECT_EQ(profiler.sessions[3], std::vector<std::string>{"k2"});
  EXPECT_EQ(result.fallback, "3 unnamed ranges for 2 launches");
  expect_own_counters(result, {});
}

TEST(CollectCountersInBatches, DroppedRangesSplitTheBatchInHalvesUntilTheyFit) {
  FakeProfiler profiler;
  profiler.max_launches = 8;
  profiler.room_for = 3;
  const BatchedCounters result = collect_counters_in_batches(profiler, nullptr, launches(11));
  // 11 in sessions of 6 and 5; 6 -> 3 + 3; 5 -> 2 + 3, each half counted before the next batch.
  using Names = std::vector<std::string>;
  const std::vector<Names> expected{
      {"k0", "k1", "k2", "k3", "k4", "k5"}, {"k0", "k1", "k2"}, {"k3", "k4", "k5"},
      {"k6", "k7", "k8", "k9", "k10"},      {"k6", "k7"},       {"k8", "k9", "k10"}};
  EXPECT_EQ(profiler.sessions, expected);
  EXPECT_EQ(result.sessions, 6u);
  EXPECT_EQ(result.fallback, "4 profiler ranges dropped");
  expect_own_counters(result, {});
}

TEST(CollectCountersInBatches, AProfilerThatBecomesUnavailableStopsWithoutFailures) {
  FakeProfiler profiler;
  profiler.unavailable_after = 1;
  const BatchedCounters result = collect_counters_in_batches(profiler, nullptr, launches(8));
  EXPECT_EQ(profiler.sessions.size(), 1u);
  expect_own_counters(result, {4, 5, 6, 7});
  for (const std::string& failure : result.failed) EXPECT_EQ(failure, "");
}

TEST(AttributeBatchRanges, NamedRangesSplitAtTheFlushes) {
  const std::vector<std::string> names = {
      "swr_l2_flush",          "swr_attention_forward", "swr_l2_flush",         "memset_kernel",
      "swr_attention_forward", "swr_l2_flush",          "swr_attention_forward"};
  EXPECT_EQ(attribute_batch_ranges(
                names, {"swr_attention_forward", "swr_attention_forward", "swr_attention_forward"}),
            (std::vector<std::size_t>{1, 4, 6}));
  // A launch whose kernel is missing is an error, not its neighbour's counters.
  EXPECT_THROW(attribute_batch_ranges(
                   names, {"swr_attention_forward", "other_kernel", "swr_attention_forward"}),
               std::runtime_error);
  // As many flushes as launches, or nothing is attributed.
  EXPECT_THROW(attribute_batch_ranges(names, {"a", "b"}), std::runtime_error);
}

TEST(AttributeBatchRanges, NumberedRangesNeedOneFlushAndOneKernelPerLaunch) {
  EXPECT_EQ(attribute_batch_ranges({"0", "1", "2", "3"}, {"a", "b"}),
            (std::vector<std::size_t>{1, 3}));
  EXPECT_THROW(attribute_batch_ranges({"0", "1", "2", "3", "4"}, {"a", "b"}), std::runtime_error);
}

TEST(CountedInABatch, ShortKernelsWaitForTheBatchLongOnesAreCountedAlone) {
  EXPECT_TRUE(counted_in_a_batch({0.05, 0.04, 0.06}));
  EXPECT_TRUE(counted_in_a_batch({kBatchedCountersUpToMs}));
  // The median decides: one slow outlier does not take a short kernel out of its batch.
  EXPECT_TRUE(counted_in_a_batch({0.2, 0.3, 9.0}));
  EXPECT_FALSE(counted_in_a_batch({3.1, 2.9, 3.0}));
  EXPECT_FALSE(counted_in_a_batch({0.5, 3.0, 3.2}));
  EXPECT_FALSE(counted_in_a_batch({}));  // not timed: nothing says it is short
}

TEST(CounterSessionSize, TheEnvironmentSelectsOneSessionPerVariant) {
  unsetenv("SWR_COUNTERS_PER_VARIANT");
  EXPECT_EQ(counter_session_size_from_environment(), 0u);
  setenv("SWR_COUNTERS_PER_VARIANT", "1", 1);
  EXPECT_EQ(counter_session_size_from_environment(), 1u);
  setenv("SWR_COUNTERS_PER_VARIANT", "0", 1);
  EXPECT_EQ(counter_session_size_from_environment(), 0u);
  unsetenv("SWR_COUNTERS_PER_VARIANT");
}

}  // namespace
}  // namespace swr
