// Model predictions live beside measurements and never show up as one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "db/results_database.hpp"
#include "tests/db/results_fixtures.hpp"
#include "tests/generator/temporary_directory.hpp"

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

}  // namespace
}  // namespace swr::db
