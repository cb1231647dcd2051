// Variants measured in batches (their counters in one profiling session), without a GPU: what a
// worker that dies in a batch costs (only its variant), how the session hands batches to a device,
// and a tuner killed with SIGKILL in the middle of a batch (rows of finished batches kept, the
// rest measured by the same command, nothing twice).
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "db/results_database.hpp"
#include "fake_variant_measurer.hpp"
#include "support/child_process.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tuner/tuning/tuning_session.hpp"
#include "tuner/tuning/variant_batches.hpp"

namespace swr {
namespace {

using testing::FakeVariantMeasurer;

VariantOutcome ok_outcome(std::size_t variant) {
  VariantOutcome outcome;
  outcome.times_ms = {1.0 + static_cast<double>(variant)};
  outcome.counters.l2_sector_misses_from_tex = 100.0 * static_cast<double>(variant);
  return outcome;
}

// A worker of variants 0..n-1 in which `deadly` variants kill it while measured, and the batch's
// counters kill it (no culprit) when `dies_counting` holds for the positions asked.
struct FakeBatchWorker {
  std::set<std::size_t> deadly;
  std::function<bool(const std::vector<std::size_t>&)> dies_counting;
  std::vector<std::pair<std::vector<std::size_t>, bool>> requests;

  BatchAttempt operator()(const std::vector<std::size_t>& positions, bool one_session_each) {
    requests.push_back({positions, one_session_each});
    BatchAttempt attempt;
    for (std::size_t i = 0; i < positions.size(); ++i) {
      if (deadly.count(positions[i]) > 0) {
        attempt.culprit = i;
        attempt.death.status = db::MeasurementStatus::fault;
        attempt.death.error = "illegal address in variant " + std::to_string(positions[i]);
        return attempt;
      }
    }
    if (!one_session_each && dies_counting && dies_counting(positions)) {
      attempt.death.status = db::MeasurementStatus::fault;
      attempt.death.error = "the measurement worker died while counting a batch";
      return attempt;
    }
    for (std::size_t position : positions) attempt.outcomes.push_back(ok_outcome(position));
    attempt.complete = true;
    return attempt;
  }
};

void expect_measured(const std::vector<VariantOutcome>& outcomes,
                     const std::set<std::size_t>& faulted) {
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (faulted.count(i) > 0) {
      EXPECT_EQ(outcomes[i].status, db::MeasurementStatus::fault) << i;
      EXPECT_NE(outcomes[i].error.find(std::to_string(i)), std::string::npos) << outcomes[i].error;
    } else {
      EXPECT_EQ(outcomes[i].status, db::MeasurementStatus::ok) << i;
      ASSERT_EQ(outcomes[i].times_ms.size(), 1u) << i;
      EXPECT_EQ(outcomes[i].times_ms[0], 1.0 + static_cast<double>(i)) << i;  // its own figures
      EXPECT_EQ(outcomes[i].counters.l2_sector_misses_from_tex, 100.0 * static_cast<double>(i));
    }
  }
}

TEST(CounterBatch, BatchesOfThirtyTwoUnlessTheEnvironmentSaysOtherwise) {
  unsetenv("SWR_COUNTER_BATCH");
  EXPECT_EQ(counter_batch_from_environment(), kVariantsPerCounterBatch);
  setenv("SWR_COUNTER_BATCH", "1", 1);  // one variant a request, as before batches
  EXPECT_EQ(counter_batch_from_environment(), 1u);
  setenv("SWR_COUNTER_BATCH", "8", 1);
  EXPECT_EQ(counter_batch_from_environment(), 8u);
  for (const char* bad : {"0", "33", "eight", "8x"}) {
    setenv("SWR_COUNTER_BATCH", bad, 1);
    EXPECT_THROW(counter_batch_from_environment(), UsageError) << bad;
  }
  unsetenv("SWR_COUNTER_BATCH");
}

TEST(MeasureIsolatingFaults, AHealthyBatchIsOneRequest) {
  FakeBatchWorker worker;
  const auto outcomes = measure_isolating_faults(5, std::ref(worker));
  EXPECT_EQ(worker.requests.size(), 1u);
  expect_measured(outcomes, {});
}

TEST(MeasureIsolatingFaults, AVariantThatKillsTheWorkerCostsOnlyItself) {
  FakeBatchWorker worker;
  worker.deadly = {2, 4};
  const auto outcomes = measure_isolating_faults(6, std::ref(worker));
  // {0..5} dies at 2; {0,1,3,4,5} dies at 4; {0,1,3,5} completes, batched as before.
  ASSERT_EQ(worker.requests.size(), 3u);
  EXPECT_EQ(worker.requests[1].first, (std::vector<std::size_t>{0, 1, 3, 4, 5}));
  EXPECT_EQ(worker.requests[2].first, (std::vector<std::size_t>{0, 1, 3, 5}));
  EXPECT_FALSE(worker.requests[2].second);
  expect_measured(outcomes, {2, 4});
}

TEST(MeasureIsolatingFaults, ADeathWhileCountingIsRetriedOneSessionEachToNameItsVariant) {
  FakeBatchWorker worker;
  // Batched counting of variant 3 kills the worker; alone, its timing does.
  worker.dies_counting = [](const std::vector<std::size_t>& positions) {
    return std::find(positions.begin(), positions.end(), 3) != positions.end();
  };
  worker.deadly = {};
  std::size_t calls = 0;
  const auto outcomes = measure_isolating_faults(
      5, [&](const std::vector<std::size_t>& positions, bool one_session_each) {
        ++calls;
        if (one_session_each) worker.deadly = {3};
        return worker(positions, one_session_each);
      });
  ASSERT_EQ(worker.requests.size(), 3u);
  EXPECT_FALSE(worker.requests[0].second);
  EXPECT_TRUE(worker.requests[1].second);  // then one session each: the death names variant 3
  EXPECT_EQ(worker.requests[2].first, (std::vector<std::size_t>{0, 1, 2, 4}));
  expect_measured(outcomes, {3});
}

TEST(MeasureIsolatingFaults, AnUnnamedDeathEvenOneByOneStillMovesOn) {
  std::size_t calls = 0;
  const auto outcomes =
      measure_isolating_faults(3, [&](const std::vector<std::size_t>& positions, bool) {
        ++calls;
        BatchAttempt attempt;
        attempt.death.status = db::MeasurementStatus::timeout;
        attempt.death.error = "no result";
        (void)positions;
        return attempt;
      });
  EXPECT_EQ(calls, 4u);  // batched once, then one death per variant
  for (const VariantOutcome& outcome : outcomes) {
    EXPECT_EQ(outcome.status, db::MeasurementStatus::timeout);
  }
}

TEST(MeasureIsolatingFaults, ADroppedBatchDropsWhatIsNotMeasured) {
  const auto outcomes = measure_isolating_faults(3, [](const std::vector<std::size_t>&, bool) {
    BatchAttempt attempt;
    attempt.death.dropped = true;
    return attempt;
  });
  for (const VariantOutcome& outcome : outcomes) EXPECT_TRUE(outcome.dropped);
}

const AttentionProblem kProblem{1, 2, 256, 256, 64, DataType::f16, false};

std::vector<AttentionConfig> ten_configs() {
  std::vector<AttentionConfig> configs;
  for (const char* order : {"cyclic", "sawtooth"}) {
    for (const char* persistence : {"grid", "static", "dynamic"}) {
      for (const char* stages : {"s1", "s2"}) {
        if (configs.size() == 10) break;
        configs.push_back(*AttentionConfig::from_key(std::string("m64n64w4") + stages + "-" +
                                                     order + "-" + persistence + "-head_major"));
      }
    }
  }
  return configs;
}

class BatchedSessionTest : public ::testing::Test {
 protected:
  TuningPlan plan() const {
    TuningPlan plan;
    plan.gpu = *find_gpu_profile("h200");
    plan.driver_version = "test-driver 13.0";
    plan.shapes = {{kProblem, ten_configs()}};
    plan.database = database_path_;
    plan.cubin_cache = SWR_TEST_CUBIN_CACHE;
    plan.compile_threads = 2;
    return plan;
  }
  int rows() const {
    if (!std::filesystem::exists(database_path_)) return 0;
    SQLite::Database raw(database_path_.string(), SQLite::OPEN_READONLY);
    return raw.execAndGet("SELECT COUNT(*) FROM measurements").getInt();
  }
  int distinct_configs() const {
    SQLite::Database raw(database_path_.string(), SQLite::OPEN_READONLY);
    return raw.execAndGet("SELECT COUNT(DISTINCT config_id) FROM measurements").getInt();
  }

  testing::TemporaryDirectory scratch_;
  std::filesystem::path database_path_ = scratch_.path() / "results.db";
};

// Counted variants go to the device in batches of at most the measurer's size; timing only
// (--counters none) needs no batch.
TEST_F(BatchedSessionTest, CountedVariantsGoInBatchesTimingOnlyDoesNot) {
  FakeVariantMeasurer measurer;
  measurer.batch = 4;
  InterruptFlag interrupt;
  TuningSession session(plan(), measurer, interrupt);
  EXPECT_EQ(session.run().recorded, 10);
  ASSERT_FALSE(measurer.batches.empty());
  std::size_t batched = 0;
  for (const auto& batch : measurer.batches) {
    EXPECT_LE(batch.size(), 4u);
    batched += batch.size();
  }
  EXPECT_EQ(batched, 10u);
  EXPECT_EQ(rows(), 10);

  TuningPlan none = plan();
  none.counters = CountersPolicy::none;
  none.retune = true;
  FakeVariantMeasurer timing;
  timing.batch = 4;
  TuningSession again(none, timing, interrupt);
  EXPECT_EQ(again.run().recorded, 10);
  EXPECT_TRUE(timing.batches.empty());
}

// SIGKILL while the second batch is measured: the first batch's rows are there, the second's are
// not; the same run again measures exactly the rest, and no variant has two rows.
TEST_F(BatchedSessionTest, KilledInTheMiddleOfABatchKeepsFinishedRowsAndResumesWithoutDuplicates) {
  const pid_t child = run_in_child([this] {
    FakeVariantMeasurer measurer;
    measurer.batch = 4;
    measurer.before_batch = [](int batch_number) {
      if (batch_number == 2) kill(getpid(), SIGKILL);
    };
    InterruptFlag interrupt;
    TuningSession session(plan(), measurer, interrupt);
    session.run();
    return 0;
  });
  const ChildExit exit = wait_for_child(child);
  ASSERT_TRUE(exit.signaled) << exit.describe();
  EXPECT_EQ(exit.code, SIGKILL);
  const int kept = rows();
  EXPECT_GE(kept, 1);
  EXPECT_LE(kept, 4);  // the first batch at most: nothing of the second

  FakeVariantMeasurer measurer;
  measurer.batch = 4;
  InterruptFlag interrupt;
  TuningSession session(plan(), measurer, interrupt);
  const TuningSummary resumed = session.run();
  EXPECT_EQ(resumed.already_measured, kept);
  EXPECT_EQ(resumed.recorded, 10 - kept);
  EXPECT_EQ(rows(), 10);
  EXPECT_EQ(distinct_configs(), 10);
}

}  // namespace
}  // namespace swr
