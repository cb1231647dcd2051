// Recording measurements and reading them back: the best variant (best_for, the one rule),
// newest-per-triple, resume, listings, read-only use and the record's rules.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/results_database.hpp"
#include "support/child_process.hpp"
#include "tests/db/results_fixtures.hpp"
#include "tests/generator/temporary_directory.hpp"

namespace swr::db {
namespace {

using swr::testing::failed_measurement;
using swr::testing::numbered_config;
using swr::testing::ok_measurement;
using swr::testing::sample_gpu;
using swr::testing::sample_problem;
using swr::testing::TemporaryDirectory;

class MeasurementsTest : public ::testing::Test {
 protected:
  MeasurementsTest()
      : path_(directory_.path() / "results.db"),
        database_(path_),
        gpu_(database_.upsert_gpu(sample_gpu())),
        problem_(database_.upsert_problem(sample_problem())) {}

  ConfigId config(int index) { return database_.upsert_config(numbered_config(index)); }
  std::string key(int index) { return numbered_config(index).key(); }

  // A re-tune of `index` by another build of its kernel (an edited template): a new source hash.
  MeasurementRecord rebuilt(int index, double median_ms) {
    MeasurementRecord record = ok_measurement(gpu_, problem_, config(index), median_ms);
    record.source_hash += "-rebuilt";
    return record;
  }

  // What the SQL view says, for comparison with the C++ listing.
  std::vector<std::int64_t> view_ids(const char* view) {
    SQLite::Database sqlite(path_, SQLite::OPEN_READONLY);
    SQLite::Statement query(sqlite, std::string("SELECT id FROM ") + view +
                                        " WHERE gpu_id = ? AND problem_id = ? ORDER BY id");
    query.bind(1, raw(gpu_));
    query.bind(2, raw(problem_));
    std::vector<std::int64_t> ids;
    while (query.executeStep()) ids.push_back(query.getColumn(0).getInt64());
    return ids;
  }
  void expect_views_agree() {
    std::vector<std::int64_t> newest;
    for (const StoredMeasurement& stored : database_.measurements_for(gpu_, problem_)) {
      newest.push_back(stored.id);
    }
    std::sort(newest.begin(), newest.end());
    EXPECT_EQ(view_ids("latest_measurements"), newest);
  }

  TemporaryDirectory directory_;
  std::filesystem::path path_;
  ResultsDatabase database_;
  GpuId gpu_;
  ProblemId problem_;
};

TEST_F(MeasurementsTest, UpsertsReturnTheSameIds) {
  EXPECT_EQ(database_.upsert_gpu(sample_gpu()), gpu_);
  EXPECT_EQ(database_.upsert_problem(sample_problem()), problem_);
  EXPECT_EQ(config(3), config(3));
  EXPECT_NE(config(3), config(4));
  EXPECT_NE(database_.upsert_problem(sample_problem(4096, true)), problem_);
  // A driver upgrade keeps the GPU (and its results) and records the new versions.
  GpuRecord upgraded = sample_gpu();
  upgraded.driver_version = "590.1";
  EXPECT_EQ(database_.upsert_gpu(upgraded), gpu_);
  EXPECT_EQ(database_.gpu(gpu_).gpu.driver_version, "590.1");
  // Other hardware under the same profile name is another GPU.
  GpuRecord other = sample_gpu();
  other.sm_count = 114;
  EXPECT_NE(database_.upsert_gpu(other), gpu_);
  EXPECT_EQ(database_.gpus_named("h200").size(), 2u);
}

TEST_F(MeasurementsTest, ProblemShapeIsStoredInColumns) {
  const StoredProblem stored = database_.problem(problem_);
  EXPECT_EQ(stored.family, "attention");
  EXPECT_EQ(stored.key, sample_problem().key());
  ASSERT_TRUE(stored.attention.has_value());
  EXPECT_EQ(stored.attention->key(), sample_problem().key());
  EXPECT_EQ(stored.json.at("seq_kv"), 4096);
  SQLite::Database raw(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM attention_problems WHERE seq_kv = 4096"
                           " AND head_dim = 128 AND dtype = 'f16' AND causal = 0")
                .getInt(),
            1);
}

TEST_F(MeasurementsTest, EveryFieldRoundTrips) {
  MeasurementRecord record = ok_measurement(gpu_, problem_, config(0), 1.25);
  record.tflops = 512.5;
  record.relative_error = 1e-3;
  record.l2_sectors_from_tex = 1.5e10;
  record.l2_sector_misses = 4.58e9;
  record.l2_hit_rate = 0.57;
  record.dram_read_bytes = 1.09e11;
  record.dram_write_bytes = 2.1e8;
  record.observed_intensity = 310.0;
  record.algorithmic_intensity = 4096.0;
  record.roofline_fraction = 0.61;
  record.registers = 168;
  record.spill_bytes = 0;
  record.dynamic_shared_bytes = 98304;
  record.blocks_per_sm = 1;
  record.measured_at = "2025-06-01T12:34:56.789Z";
  const std::int64_t id = database_.record_measurement(record);
  const std::vector<StoredMeasurement> stored = database_.measurements_for(gpu_, problem_);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].id, id);
  EXPECT_EQ(stored[0].config_key, key(0));
  EXPECT_EQ(stored[0].config_json, numbered_config(0).to_json());
  const MeasurementRecord& back = stored[0].record;
  EXPECT_EQ(back.gpu, gpu_);
  EXPECT_EQ(back.status, MeasurementStatus::ok);
  EXPECT_TRUE(back.error.empty());
  EXPECT_EQ(back.median_ms, 1.25);
  EXPECT_EQ(back.p95_ms, record.p95_ms);
  EXPECT_EQ(back.min_ms, record.min_ms);
  EXPECT_EQ(back.timed_runs, 20);
  EXPECT_EQ(back.tflops, 512.5);
  EXPECT_EQ(back.relative_error, 1e-3);
  EXPECT_EQ(back.l2_sectors_from_tex, 1.5e10);
  EXPECT_EQ(back.l2_sector_misses, 4.58e9);
  EXPECT_EQ(back.l2_hit_rate, 0.57);
  EXPECT_EQ(back.dram_read_bytes, 1.09e11);
  EXPECT_EQ(back.dram_write_bytes, 2.1e8);
  EXPECT_EQ(back.observed_intensity, 310.0);
  EXPECT_EQ(back.algorithmic_intensity, 4096.0);
  EXPECT_EQ(back.roofline_fraction, 0.61);
  EXPECT_EQ(back.registers, 168);
  EXPECT_EQ(back.spill_bytes, 0);
  EXPECT_EQ(back.dynamic_shared_bytes, 98304);
  EXPECT_EQ(back.blocks_per_sm, 1);
  EXPECT_EQ(back.method, record.method);
  EXPECT_EQ(back.source_hash, record.source_hash);
  EXPECT_EQ(back.toolkit_version, "13.0");
  EXPECT_EQ(back.driver_version, "580.65");
  EXPECT_EQ(back.measured_at, "2025-06-01T12:34:56.789Z");
}

TEST_F(MeasurementsTest, MissingCountersStayMissing) {
  database_.record_measurement(ok_measurement(gpu_, problem_, config(0), 1.0));
  const MeasurementRecord back = database_.measurements_for(gpu_, problem_).at(0).record;
  EXPECT_FALSE(back.l2_sector_misses.has_value());
  EXPECT_FALSE(back.l2_hit_rate.has_value());
  EXPECT_FALSE(back.dram_read_bytes.has_value());
  EXPECT_FALSE(back.registers.has_value());
  // The database's clock filled in the time, in the fixed-width UTC form.
  EXPECT_EQ(back.measured_at.size(), 24u) << back.measured_at;
  EXPECT_EQ(back.measured_at.back(), 'Z');
}

TEST_F(MeasurementsTest, BestIsTheFastestValidNeverAFailedOne) {
  database_.record_measurement(ok_measurement(gpu_, problem_, config(0), 2.0));
  database_.record_measurement(ok_measurement(gpu_, problem_, config(1), 1.0));
  database_.record_measurement(
      failed_measurement(gpu_, problem_, config(2), MeasurementStatus::fault, "illegal address"));
  // A wrong variant can be fast; it is still never best.
  MeasurementRecord wrong = failed_measurement(gpu_, problem_, config(3),
                                               MeasurementStatus::wrong_result, "max error 0.4");
  wrong.median_ms = 0.25;
  database_.record_measurement(wrong);
  database_.record_measurement(ok_measurement(gpu_, problem_, config(4), 1.0));  // tie with 1

  const std::optional<StoredMeasurement> best = database_.best_for(gpu_, problem_);
  ASSERT_TRUE(best.has_value());
  // Equal times: the smaller config key wins, the same way in every database.
  EXPECT_EQ(best->config_key, std::min(key(1), key(4)));
  EXPECT_EQ(best->record.median_ms, 1.0);
  EXPECT_EQ(best->record.status, MeasurementStatus::ok);

  const std::vector<StoredMeasurement> all = database_.measurements_for(gpu_, problem_);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].record.median_ms, 1.0);
  EXPECT_EQ(all[1].record.median_ms, 1.0);
  EXPECT_EQ(all[2].record.median_ms, 2.0);
  EXPECT_NE(all[3].record.status, MeasurementStatus::ok);  // failed ones last
  EXPECT_NE(all[4].record.status, MeasurementStatus::ok);
  expect_views_agree();
}

TEST_F(MeasurementsTest, OnlyTheNewestMeasurementOfATripleCounts) {
  database_.record_measurement(ok_measurement(gpu_, problem_, config(0), 2.0));
  database_.record_measurement(ok_measurement(gpu_, problem_, config(1), 1.0));
  ASSERT_EQ(database_.best_for(gpu_, problem_)->config_key, key(1));

  // --retune with a new build of config 1, slower now: config 0 is best.
  database_.record_measurement(rebuilt(1, 3.0));
  EXPECT_EQ(database_.best_for(gpu_, problem_)->config_key, key(0));
  // Config 0 now faults: its old valid time no longer counts.
  database_.record_measurement(
      failed_measurement(gpu_, problem_, config(0), MeasurementStatus::timeout, "ran 10 s"));
  const auto best = database_.best_for(gpu_, problem_);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->config_key, key(1));
  EXPECT_EQ(best->record.median_ms, 3.0);

  // A measurement taken earlier of the old build (e.g. imported from another machine) does not
  // replace a newer one.
  MeasurementRecord old = ok_measurement(gpu_, problem_, config(1), 0.5);
  old.measured_at = "2000-01-01T00:00:00.000Z";
  database_.record_measurement(old);
  EXPECT_EQ(database_.best_for(gpu_, problem_)->record.median_ms, 3.0);

  const std::vector<StoredMeasurement> newest = database_.measurements_for(gpu_, problem_);
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0].config_key, key(1));
  EXPECT_EQ(newest[1].record.status, MeasurementStatus::timeout);
  expect_views_agree();
  SQLite::Database raw(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM measurements").getInt(), 5);  // history kept
}

TEST_F(MeasurementsTest, MeasurementsAreNeverEditedAndDeletingTheNewestRestoresTheOneBefore) {
  database_.record_measurement(ok_measurement(gpu_, problem_, config(0), 2.0));
  database_.record_measurement(ok_measurement(gpu_, problem_, config(1), 1.0));
  const std::int64_t retuned = database_.record_measurement(rebuilt(1, 3.0));
  ASSERT_EQ(database_.best_for(gpu_, problem_)->config_key, key(0));
  SQLite::Database raw(path_, SQLite::OPEN_READWRITE);
  EXPECT_THROW(raw.exec("UPDATE measurements SET median_ms = 0.1"), SQLite::Exception);
  raw.exec("DELETE FROM measurements WHERE id = " + std::to_string(retuned));
  const auto best = database_.best_for(gpu_, problem_);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->config_key, key(1));
  EXPECT_EQ(best->record.median_ms, 1.0);
  expect_views_agree();
}

// The rule's other half: runs of one build differ only by interference, which only slows a run,
// so a slower re-run of the same build leaves its fastest run in place.
TEST_F(MeasurementsTest, ASlowerRerunOfTheSameBuildKeepsItsFastestRun) {
  database_.record_measurement(ok_measurement(gpu_, problem_, config(0), 2.0));
  database_.record_measurement(ok_measurement(gpu_, problem_, config(1), 1.0));
  database_.record_measurement(ok_measurement(gpu_, problem_, config(1), 3.0));  // a busy GPU
  std::optional<StoredMeasurement> best = database_.best_for(gpu_, problem_);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->config_key, key(1));
  EXPECT_EQ(best->record.median_ms, 1.0);
  // An imported older run of that build that was faster still counts: same binary.
  MeasurementRecord earlier = ok_measurement(gpu_, problem_, config(1), 0.75);
  earlier.measured_at = "2000-01-01T00:00:00.000Z";
  database_.record_measurement(earlier);
  EXPECT_EQ(database_.best_for(gpu_, problem_)->record.median_ms, 0.75);
  // The summary that `show` prints uses the same rule.
  const std::vector<ProblemSummary> summaries = database_.problem_summaries();
  ASSERT_EQ(summaries.size(), 1u);
  ASSERT_TRUE(summaries[0].best.has_value());
  EXPECT_EQ(summaries[0].best->id, database_.best_for(gpu_, problem_)->id);
  // The listing shows each config's newest run, not its fastest.
  const std::vector<StoredMeasurement> newest = database_.measurements_for(gpu_, problem_);
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0].config_key, key(0));
  EXPECT_EQ(newest[1].record.median_ms, 3.0);
}

TEST_F(MeasurementsTest, AFailedRerunOrAFasterNewBuildDecides) {
  database_.record_measurement(ok_measurement(gpu_, problem_, config(0), 2.0));
  database_.record_measurement(ok_measurement(gpu_, problem_, config(1), 1.0));
  // The same build fails on a re-run (e.g. a fault): config 1's fast run no longer counts.
  database_.record_measurement(
      failed_measurement(gpu_, problem_, config(1), MeasurementStatus::fault, "illegal address"));
  EXPECT_EQ(database_.best_for(gpu_, problem_)->config_key, key(0));
  // A new build of config 1 that is valid again counts with its own time only.
  database_.record_measurement(rebuilt(1, 1.5));
  std::optional<StoredMeasurement> best = database_.best_for(gpu_, problem_);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->config_key, key(1));
  EXPECT_EQ(best->record.median_ms, 1.5);
  // A tie between a repeated config's older run and another config: the smaller key wins.
  database_.record_measurement(rebuilt(1, 2.5));
  database_.record_measurement(ok_measurement(gpu_, problem_, config(2), 1.5));
  best = database_.best_for(gpu_, problem_);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->config_key, std::min(key(1), key(2)));
  EXPECT_EQ(best->record.median_ms, 1.5);
}

TEST_F(MeasurementsTest, AllFailedMeansNoBest) {
  database_.record_measurement(failed_measurement(gpu_, problem_, config(0),
                                                  MeasurementStatus::compile_error, "nvrtc: ..."));
  database_.record_measurement(
      failed_measurement(gpu_, problem_, config(1), MeasurementStatus::launch_error, "too many"));
  EXPECT_FALSE(database_.best_for(gpu_, problem_).has_value());
  const std::vector<ProblemSummary> summaries = database_.problem_summaries();
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_FALSE(summaries[0].best.has_value());
  EXPECT_EQ(summaries[0].variants_measured, 2);
  EXPECT_EQ(summaries[0].variants_failed, 2);
}

TEST_F(MeasurementsTest, ResumeSkipsExactlyWhatWasMeasured) {
  const int total = 10;
  const int measured = 4;
  std::set<std::string> expected;
  for (int i = 0; i < measured; ++i) {
    const ConfigId id = config(i);
    if (i % 2 == 0) {
      database_.record_measurement(ok_measurement(gpu_, problem_, id, 1.0 + i));
    } else {
      database_.record_measurement(
          failed_measurement(gpu_, problem_, id, MeasurementStatus::fault, "trap"));
    }
    expected.insert(key(i));
  }
  for (int i = measured; i < total; ++i) config(i);  // known configs, not measured
  // Measurements of another problem and another GPU do not count for this one.
  const ProblemId other_problem = database_.upsert_problem(sample_problem(8192));
  database_.record_measurement(ok_measurement(gpu_, other_problem, config(7), 1.0));
  GpuRecord other = sample_gpu();
  other.name = "h100";
  const GpuId other_gpu = database_.upsert_gpu(other);
  database_.record_measurement(ok_measurement(other_gpu, problem_, config(8), 1.0));

  EXPECT_EQ(database_.measured_config_keys(gpu_, problem_), expected);
  ResultsDatabase reopened(path_, OpenMode::read_only);
  EXPECT_EQ(reopened.measured_config_keys(gpu_, problem_), expected);
}

// A tuning process killed (SIGKILL, no cleanup) after k variants: those k are in the file.
TEST(KilledRun, LosesNothingAlreadyMeasured) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  const int measured = 7;
  const pid_t child = run_in_child([&] {
    ResultsDatabase database(path);
    const GpuId gpu = database.upsert_gpu(sample_gpu());
    const ProblemId problem = database.upsert_problem(sample_problem());
    for (int i = 0; i < measured; ++i) {
      const ConfigId config = database.upsert_config(numbered_config(i));
      database.record_measurement(ok_measurement(gpu, problem, config, 1.0 + i));
    }
    database.upsert_config(numbered_config(measured));  // the variant in flight
    raise(SIGKILL);
    return 3;
  });
  const ChildExit exit = wait_for_child(child);
  ASSERT_TRUE(exit.signaled && exit.code == SIGKILL) << exit.describe();

  ResultsDatabase database(path);
  const GpuId gpu = database.upsert_gpu(sample_gpu());
  const ProblemId problem = database.upsert_problem(sample_problem());
  std::set<std::string> expected;
  for (int i = 0; i < measured; ++i) expected.insert(numbered_config(i).key());
  EXPECT_EQ(database.measured_config_keys(gpu, problem), expected);
}

TEST_F(MeasurementsTest, SummariesListEveryMeasuredProblem) {
  const ProblemId causal = database_.upsert_problem(sample_problem(4096, true));
  database_.upsert_problem(sample_problem(65536));  // known, never measured: not listed
  database_.record_measurement(ok_measurement(gpu_, problem_, config(0), 2.0));
  database_.record_measurement(ok_measurement(gpu_, problem_, config(1), 1.5));
  database_.record_measurement(ok_measurement(gpu_, causal, config(0), 0.9));
  const std::vector<ProblemSummary> summaries = database_.problem_summaries(gpu_);
  ASSERT_EQ(summaries.size(), 2u);
  for (const ProblemSummary& summary : summaries) {
    EXPECT_EQ(summary.gpu.id, gpu_);
    EXPECT_EQ(summary.gpu.gpu.name, "h200");
    ASSERT_TRUE(summary.best.has_value());
    if (summary.problem.id == problem_) {
      EXPECT_EQ(summary.best->config_key, key(1));
      EXPECT_EQ(summary.variants_measured, 2);
    } else {
      EXPECT_EQ(summary.problem.id, causal);
      EXPECT_TRUE(summary.problem.attention->causal);
      EXPECT_EQ(summary.variants_measured, 1);
    }
    EXPECT_EQ(summary.variants_failed, 0);
  }
  GpuRecord other = sample_gpu();
  other.name = "gb10";
  EXPECT_TRUE(database_.problem_summaries(database_.upsert_gpu(other)).empty());
}

TEST_F(MeasurementsTest, ReadOnlyOpenQueriesAndNeverWrites) {
  database_.record_measurement(ok_measurement(gpu_, problem_, config(0), 2.0));
  ResultsDatabase reader(path_, OpenMode::read_only);
  EXPECT_EQ(reader.find_gpu(sample_gpu()), gpu_);
  EXPECT_EQ(reader.find_problem(sample_problem()), problem_);
  EXPECT_EQ(reader.find_config(numbered_config(0)), config(0));
  EXPECT_FALSE(reader.find_problem(sample_problem(123)).has_value());
  EXPECT_FALSE(reader.find_config(numbered_config(50)).has_value());
  EXPECT_EQ(reader.best_for(gpu_, problem_)->record.median_ms, 2.0);
  EXPECT_THROW(reader.upsert_config(numbered_config(9)), std::logic_error);
  EXPECT_THROW(reader.record_measurement(ok_measurement(gpu_, problem_, config(0), 1.0)),
               std::logic_error);
}

// Each query's statement is kept prepared; it must not pin the reader to an old snapshot.
TEST_F(MeasurementsTest, AReaderSeesLaterCommitsOfAnotherConnection) {
  database_.record_measurement(ok_measurement(gpu_, problem_, config(0), 2.0));
  ResultsDatabase reader(path_, OpenMode::read_only);
  for (int round = 1; round <= 3; ++round) {
    database_.record_measurement(ok_measurement(gpu_, problem_, config(round), 2.0 - 0.5 * round));
    const auto best = reader.best_for(gpu_, problem_);
    ASSERT_TRUE(best.has_value());
    EXPECT_EQ(best->config_key, key(round));
    EXPECT_EQ(reader.measured_config_keys(gpu_, problem_).size(),
              static_cast<std::size_t>(round + 1));
    EXPECT_EQ(reader.problem_summaries().at(0).variants_measured, round + 1);
  }
}

TEST_F(MeasurementsTest, RecordsThatBreakTheRulesAreRefused) {
  MeasurementRecord no_time = ok_measurement(gpu_, problem_, config(0), 1.0);
  no_time.median_ms.reset();
  EXPECT_THROW(database_.record_measurement(no_time), std::invalid_argument);
  MeasurementRecord silent_failure =
      failed_measurement(gpu_, problem_, config(0), MeasurementStatus::fault, "");
  EXPECT_THROW(database_.record_measurement(silent_failure), std::invalid_argument);
  MeasurementRecord percent = ok_measurement(gpu_, problem_, config(0), 1.0);
  percent.l2_hit_rate = 57.0;  // a percentage where a fraction belongs
  EXPECT_THROW(database_.record_measurement(percent), std::invalid_argument);
  MeasurementRecord bad_time = ok_measurement(gpu_, problem_, config(0), 1.0);
  bad_time.measured_at = "yesterday";
  EXPECT_THROW(database_.record_measurement(bad_time), SQLite::Exception);
  EXPECT_TRUE(database_.measured_config_keys(gpu_, problem_).empty());
  // The refused insert leaves nothing behind: the next record goes through.
  database_.record_measurement(ok_measurement(gpu_, problem_, config(0), 1.0));
  EXPECT_EQ(database_.measured_config_keys(gpu_, problem_).size(), 1u);
}

TEST_F(MeasurementsTest, ProblemAndConfigMustBeOfOneFamily) {
  std::int64_t gemm_config = 0;
  {
    SQLite::Database raw(path_, SQLite::OPEN_READWRITE);
    raw.exec("INSERT INTO configs (family, key, json) VALUES ('gemm', 'bm128bn128', '{}')");
    gemm_config = raw.getLastInsertRowid();
  }
  EXPECT_THROW(
      database_.record_measurement(ok_measurement(gpu_, problem_, ConfigId{gemm_config}, 1.0)),
      SQLite::Exception);
}

}  // namespace
}  // namespace swr::db
