// Model predictions live beside measurements and never show up as one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/Database.h>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "db/results_database.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gpu_profile.hpp"
#include "tests/db/results_fixtures.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tuner/model_ranking.hpp"

namespace swr::db {
namespace {

using swr::testing::numbered_config;
using swr::testing::ok_measurement;
using swr::testing::sample_gpu;
using swr::testing::sample_problem;
using swr::testing::TemporaryDirectory;

PredictionRecord prediction(GpuId gpu, ProblemId problem, ConfigId config, double ms,
                            const std::string& model = "schedule_simulator") {
  PredictionRecord record;
  record.gpu = gpu;
  record.problem = problem;
  record.config = config;
  record.model_name = model;
  record.model_version = "1";
  record.requested_sectors = 1.0e10;
  record.sector_misses = 2.0e9;
  record.hit_rate = 0.8;
  record.dram_bytes = 6.4e10;
  record.predicted_ms = ms;
  record.predicted_tflops = 400;
  record.sampled = true;
  record.note = "rounds 0-15 simulated, rest extrapolated";
  return record;
}

class PredictionsTest : public ::testing::Test {
 protected:
  PredictionsTest()
      : database_(directory_.path() / "results.db"),
        gpu_(database_.upsert_gpu(sample_gpu())),
        problem_(database_.upsert_problem(sample_problem())) {}

  ConfigId config(int index) { return database_.upsert_config(numbered_config(index)); }

  TemporaryDirectory directory_;
  ResultsDatabase database_;
  GpuId gpu_;
  ProblemId problem_;
};

TEST_F(PredictionsTest, NeverAppearInMeasurementQueries) {
  // The fastest predicted variant is never measured.
  database_.record_prediction(prediction(gpu_, problem_, config(0), 0.1));
  database_.record_prediction(prediction(gpu_, problem_, config(1), 5.0));
  EXPECT_TRUE(database_.measured_config_keys(gpu_, problem_).empty());
  EXPECT_FALSE(database_.best_for(gpu_, problem_).has_value());
  EXPECT_TRUE(database_.measurements_for(gpu_, problem_).empty());
  EXPECT_TRUE(database_.problem_summaries().empty());

  database_.record_measurement(ok_measurement(gpu_, problem_, config(1), 2.0));
  EXPECT_EQ(database_.measured_config_keys(gpu_, problem_),
            std::set<std::string>{numbered_config(1).key()});
  const auto best = database_.best_for(gpu_, problem_);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->config_key, numbered_config(1).key());
  EXPECT_EQ(best->record.median_ms, 2.0);
  EXPECT_EQ(database_.measurements_for(gpu_, problem_).size(), 1u);
}

TEST_F(PredictionsTest, ReadBackNewestPerConfigAndModel) {
  database_.record_prediction(prediction(gpu_, problem_, config(0), 3.0));
  database_.record_prediction(prediction(gpu_, problem_, config(1), 2.0));
  database_.record_prediction(prediction(gpu_, problem_, config(0), 1.0));  // a newer run
  database_.record_prediction(prediction(gpu_, problem_, config(0), 4.0, "closed_form"));

  const std::vector<StoredPrediction> predictions = database_.predictions_for(gpu_, problem_);
  ASSERT_EQ(predictions.size(), 3u);
  EXPECT_EQ(predictions[0].record.model_name, "closed_form");
  EXPECT_EQ(predictions[1].record.model_name, "schedule_simulator");
  EXPECT_EQ(predictions[1].record.predicted_ms, 1.0);
  EXPECT_EQ(predictions[1].config_key, numbered_config(0).key());
  EXPECT_EQ(predictions[2].record.predicted_ms, 2.0);
  const PredictionRecord& back = predictions[1].record;
  EXPECT_EQ(back.requested_sectors, 1.0e10);
  EXPECT_EQ(back.sector_misses, 2.0e9);
  EXPECT_EQ(back.hit_rate, 0.8);
  EXPECT_EQ(back.dram_bytes, 6.4e10);
  EXPECT_EQ(back.predicted_tflops, 400);
  EXPECT_TRUE(back.sampled);
  EXPECT_EQ(back.note, "rounds 0-15 simulated, rest extrapolated");
  EXPECT_EQ(back.model_version, "1");
  EXPECT_EQ(back.predicted_at.size(), 24u);
}

TEST_F(PredictionsTest, RulesAreChecked) {
  PredictionRecord nameless = prediction(gpu_, problem_, config(0), 1.0);
  nameless.model_name.clear();
  EXPECT_THROW(database_.record_prediction(nameless), std::invalid_argument);
  PredictionRecord percent = prediction(gpu_, problem_, config(0), 1.0);
  percent.hit_rate = 80;
  EXPECT_THROW(database_.record_prediction(percent), std::invalid_argument);
  EXPECT_TRUE(database_.predictions_for(gpu_, problem_).empty());
}

TEST_F(PredictionsTest, ASetIsStoredWholeOrNotAtAll) {
  database_.record_predictions({prediction(gpu_, problem_, config(0), 1.0)});  // an earlier set
  std::vector<PredictionRecord> set;
  for (int i = 1; i < 6; ++i) set.push_back(prediction(gpu_, problem_, config(i), 1.0 + i));
  // The fourth names a GEMM config for an attention problem: refused by the database's trigger
  // after three rows of the set were inserted.
  GemmConfig gemm;
  set[3].config = database_.upsert_config(gemm);
  EXPECT_ANY_THROW(database_.record_predictions(set));
  EXPECT_EQ(database_.predictions_for(gpu_, problem_).size(), 1u);  // the earlier set only
  set.erase(set.begin() + 3);
  EXPECT_EQ(database_.record_predictions(set).size(), 4u);
  EXPECT_EQ(database_.predictions_for(gpu_, problem_).size(), 5u);
}

// A tune killed (SIGKILL) while it stores the model's predictions leaves none of that set, never
// a part that `show` would present as all the model predicted.
TEST(PredictionSet, KilledWhileStoringLeavesNoPartialSet) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  { ResultsDatabase created(path); }
  Target target;
  target.problem = sample_problem();
  target.gpu = *find_gpu_profile("h200");
  std::vector<model::ModelPrediction> predictions;
  constexpr int kPredictions = 200'000;  // seconds of writing on any machine
  for (int i = 0; i < kPredictions; ++i) {
    model::ModelPrediction prediction;
    prediction.config = numbered_config(i % 72);
    prediction.config_key = prediction.config.key();
    prediction.hit_rate = 0.5;
    prediction.predicted_seconds = 1e-3 * (1 + i % 72);
    predictions.push_back(prediction);
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    const char go = 'g';
    if (write(ready[1], &go, 1) != 1) _exit(3);
    store_predictions(path, target, predictions);
    _exit(0);
  }
  close(ready[1]);
  char go = 0;
  ASSERT_EQ(read(ready[0], &go, 1), 1);
  close(ready[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child finished before it was killed: nothing tested";
  SQLite::Database after(path, SQLite::OPEN_READONLY);
  const int rows = after.execAndGet("SELECT COUNT(*) FROM predictions").getInt();
  EXPECT_TRUE(rows == 0 || rows == kPredictions) << rows << " of " << kPredictions << " stored";
}

}  // namespace
}  // namespace swr::db
