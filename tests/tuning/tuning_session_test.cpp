// The tuning session's bookkeeping on real SQLite files and real NVRTC compiles, with a fake
// measurer in place of the GPU: resume after an interruption, --retune, --limit, --time-budget,
// compile failures, failed variants never best, and the figures each record carries.
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "db/results_database.hpp"
#include "fake_variant_measurer.hpp"
#include "generator/attention_backward/attention_backward_family.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tuner/model_ranking.hpp"
#include "tuner/tuning/tuning_session.hpp"
#include "tuner/tuning/variant_record.hpp"
#include "tuner/tuning/walk_order_twins.hpp"

namespace swr {
namespace {

using testing::FakeVariantMeasurer;

const AttentionProblem kProblem{1, 2, 256, 256, 64, DataType::f16, false};

// Three cyclic variants and their sawtooth twins.
std::vector<AttentionConfig> six_configs() {
  std::vector<AttentionConfig> configs;
  for (const char* order : {"cyclic", "sawtooth"}) {
    for (const char* persistence : {"grid", "static", "dynamic"}) {
      const std::string key =
          std::string("m64n64w4s1-") + order + "-" + persistence + "-head_major";
      configs.push_back(*AttentionConfig::from_key(key));
    }
  }
  return configs;
}

std::vector<std::string> keys_of(const std::vector<AttentionConfig>& configs) {
  std::vector<std::string> keys;
  for (const AttentionConfig& config : configs) keys.push_back(config.key());
  return keys;
}

std::vector<std::string> sorted(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  return keys;
}

class TuningSessionTest : public ::testing::Test {
 protected:
  TuningPlan plan(std::vector<AttentionConfig> configs = six_configs()) const {
    TuningPlan plan;
    plan.gpu = *find_gpu_profile("h200");
    plan.driver_version = "test-driver 13.0";
    plan.shapes = {{kProblem, std::move(configs)}};
    plan.database = database_path_;
    // Shared by every test run: after the first, compiling is a cache hit.
    plan.cubin_cache = SWR_TEST_CUBIN_CACHE;
    plan.compile_threads = 2;
    return plan;
  }

  TuningSummary run(const TuningPlan& tuning_plan, FakeVariantMeasurer& measurer) {
    InterruptFlag interrupt;
    return run(tuning_plan, measurer, interrupt);
  }
  TuningSummary run(const TuningPlan& tuning_plan, FakeVariantMeasurer& measurer,
                    InterruptFlag& interrupt) {
    TuningSession session(tuning_plan, measurer, interrupt);
    return session.run();
  }

  // Newest measurement per config key, from a fresh read-only connection.
  std::vector<db::StoredMeasurement> stored() const {
    const db::ResultsDatabase database(database_path_, db::OpenMode::read_only);
    db::GpuRecord gpu = db::GpuRecord::from_profile(*find_gpu_profile("h200"));
    const auto gpu_id = database.find_gpu(gpu);
    const auto problem_id = database.find_problem(kProblem);
    if (!gpu_id || !problem_id) return {};
    return database.measurements_for(*gpu_id, *problem_id);
  }

  testing::TemporaryDirectory scratch_;
  std::filesystem::path database_path_ = scratch_.path() / "results.db";
};

TEST_F(TuningSessionTest, InterruptedRunResumesWithExactlyTheRest) {
  InterruptFlag interrupt;
  FakeVariantMeasurer first;
  first.after_each = [&interrupt](int measured) {
    if (measured == 2) interrupt.raise();  // Ctrl-C while the second variant runs
  };
  const TuningSummary stopped = run(plan(), first, interrupt);
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.exit_code(), 130);
  EXPECT_EQ(stopped.planned, 6);
  EXPECT_EQ(stopped.recorded, 2);  // the variant in flight was finished and committed
  ASSERT_EQ(first.measured_keys.size(), 2u);
  EXPECT_EQ(stored().size(), 2u);

  FakeVariantMeasurer second;
  const TuningSummary resumed = run(plan(), second);
  EXPECT_FALSE(resumed.interrupted);
  EXPECT_EQ(resumed.exit_code(), 0);
  EXPECT_EQ(resumed.already_measured, 2);
  EXPECT_EQ(resumed.planned, 4);
  EXPECT_EQ(resumed.recorded, 4);
  std::vector<std::string> all = first.measured_keys;
  all.insert(all.end(), second.measured_keys.begin(), second.measured_keys.end());
  EXPECT_EQ(sorted(all), sorted(keys_of(six_configs())));  // each exactly once
  EXPECT_EQ(stored().size(), 6u);
}

TEST_F(TuningSessionTest, CompleteShapeIsNotMeasuredAgainAndReturnsQuickly) {
  FakeVariantMeasurer first;
  EXPECT_EQ(run(plan(), first).recorded, 6);

  FakeVariantMeasurer second;
  const auto start = std::chrono::steady_clock::now();
  const TuningSummary again = run(plan(), second);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(second.measured_keys.empty());
  EXPECT_EQ(again.planned, 0);
  EXPECT_EQ(again.already_measured, 6);
  EXPECT_LT(seconds, 5.0);
}

TEST_F(TuningSessionTest, RetuneMeasuresEverythingAgain) {
  FakeVariantMeasurer first;
  run(plan(), first);
  TuningPlan retune = plan();
  retune.retune = true;
  FakeVariantMeasurer second;
  const TuningSummary again = run(retune, second);
  EXPECT_EQ(again.recorded, 6);
  EXPECT_EQ(sorted(second.measured_keys), sorted(keys_of(six_configs())));
  EXPECT_EQ(stored().size(), 6u);  // still one current measurement per config
  // Fresh inputs for every run.
  ASSERT_EQ(first.seeds.size(), 1u);
  ASSERT_EQ(second.seeds.size(), 1u);
  EXPECT_NE(*first.seeds.begin(), *second.seeds.begin());
}

TEST_F(TuningSessionTest, LimitMeasuresAtMostNAndTheNextRunTakesTheNextOnes) {
  TuningPlan limited = plan();
  limited.limit = 2;
  FakeVariantMeasurer first;
  const TuningSummary summary = run(limited, first);
  EXPECT_EQ(summary.recorded, 2);
  EXPECT_EQ(summary.left_for_later, 4);
  EXPECT_EQ(sorted(first.measured_keys), sorted({six_configs()[0].key(), six_configs()[1].key()}));

  FakeVariantMeasurer second;
  run(limited, second);
  EXPECT_EQ(sorted(second.measured_keys), sorted({six_configs()[2].key(), six_configs()[3].key()}));
  EXPECT_EQ(stored().size(), 4u);
}

TEST_F(TuningSessionTest, TimeBudgetStopsStartingNewVariants) {
  {  // compile everything once so that the budget is spent on measuring only
    FakeVariantMeasurer warm;
    TuningPlan elsewhere = plan();
    elsewhere.database = scratch_.path() / "warm-up.db";
    run(elsewhere, warm);
  }
  TuningPlan budgeted = plan();
  budgeted.time_budget_seconds = 1.0;
  FakeVariantMeasurer slow;
  slow.delay = std::chrono::milliseconds(400);
  const TuningSummary summary = run(budgeted, slow);
  EXPECT_TRUE(summary.budget_reached);
  EXPECT_FALSE(summary.interrupted);
  EXPECT_EQ(summary.exit_code(), 0);
  EXPECT_GE(summary.recorded, 1);
  EXPECT_LE(summary.recorded, 4);
  EXPECT_EQ(static_cast<std::size_t>(summary.recorded), stored().size());

  FakeVariantMeasurer rest;
  run(plan(), rest);
  EXPECT_EQ(rest.measured_keys.size(), 6u - slow.measured_keys.size());
}

TEST_F(TuningSessionTest, CompileFailureIsRecordedWithItsLogAndNeverMeasured) {
  std::vector<AttentionConfig> configs = six_configs();
  AttentionConfig broken = configs.front();
  broken.stages = 4;  // the template allows 1..3 stages: a static_assert fails in NVRTC
  configs.push_back(broken);
  FakeVariantMeasurer measurer;
  const TuningSummary summary = run(plan(configs), measurer);
  EXPECT_EQ(summary.recorded, 7);
  EXPECT_EQ(summary.failed, 1);
  EXPECT_EQ(std::count(measurer.measured_keys.begin(), measurer.measured_keys.end(), broken.key()),
            0);
  const auto measurements = stored();
  const auto failed = std::find_if(measurements.begin(), measurements.end(),
                                   [&](const auto& m) { return m.config_key == broken.key(); });
  ASSERT_NE(failed, measurements.end());
  EXPECT_EQ(failed->record.status, db::MeasurementStatus::compile_error);
  EXPECT_NE(failed->record.error.find("K/V pipeline depth 1..3"), std::string::npos)
      << failed->record.error;
  EXPECT_FALSE(failed->record.median_ms.has_value());
  // Failed variants are results: the next run does not try it again.
  FakeVariantMeasurer again;
  EXPECT_EQ(run(plan(configs), again).planned, 0);
}

TEST_F(TuningSessionTest, WrongResultIsStoredButNeverBest) {
  // Find the fastest variant first, then make it wrong in a fresh database.
  FakeVariantMeasurer probe;
  run(plan(), probe);
  const std::string fastest = stored().front().config_key;
  database_path_ = scratch_.path() / "second.db";

  FakeVariantMeasurer measurer;
  measurer.wrong_keys = {fastest};
  const TuningSummary summary = run(plan(), measurer);
  EXPECT_EQ(summary.failed, 1);
  const db::ResultsDatabase database(database_path_, db::OpenMode::read_only);
  const auto gpu = database.find_gpu(db::GpuRecord::from_profile(*find_gpu_profile("h200")));
  const auto problem = database.find_problem(kProblem);
  ASSERT_TRUE(gpu && problem);
  const auto best = database.best_for(*gpu, *problem);
  ASSERT_TRUE(best.has_value());
  EXPECT_NE(best->config_key, fastest);
  EXPECT_EQ(best->record.status, db::MeasurementStatus::ok);
  const auto all = database.measurements_for(*gpu, *problem);
  EXPECT_EQ(all.back().config_key, fastest);  // failed ones last
  EXPECT_EQ(all.back().record.status, db::MeasurementStatus::wrong_result);
}

TEST_F(TuningSessionTest, RecordsCarryFiguresVersionsAndMethod) {
  FakeVariantMeasurer measurer;
  run(plan(), measurer);
  EXPECT_GT(measurer.received_cubin_bytes, 1000u);  // the compiled cubin reached the measurer
  const NvrtcCompiler compiler;
  for (const db::StoredMeasurement& measurement : stored()) {
    const db::MeasurementRecord& record = measurement.record;
    ASSERT_EQ(record.status, db::MeasurementStatus::ok) << record.error;
    ASSERT_TRUE(record.median_ms && record.p95_ms && record.min_ms);
    EXPECT_LE(*record.min_ms, *record.median_ms);
    EXPECT_LE(*record.median_ms, *record.p95_ms);
    EXPECT_EQ(record.timed_runs, 4);
    EXPECT_NEAR(*record.tflops, kProblem.flops() / (*record.median_ms * 1e-3) / 1e12, 1e-9);
    EXPECT_DOUBLE_EQ(*record.l2_hit_rate, 0.64);
    ASSERT_TRUE(record.observed_intensity && record.algorithmic_intensity);
    EXPECT_GT(*record.algorithmic_intensity, *record.observed_intensity);
    ASSERT_TRUE(record.roofline_fraction.has_value());
    EXPECT_GT(*record.roofline_fraction, 0);
    EXPECT_LT(*record.roofline_fraction, 1);
    EXPECT_EQ(record.registers, 168);
    EXPECT_EQ(record.dynamic_shared_bytes, 24 * 1024);
    EXPECT_EQ(record.method.at("fake"), true);
    EXPECT_EQ(record.method.at("roofline_bytes"), "measured DRAM bytes");
    EXPECT_EQ(record.source_hash.size(), 64u);  // the cubin cache key (SHA-256)
    EXPECT_EQ(record.toolkit_version, compiler.version());
    EXPECT_EQ(record.driver_version, "test-driver 13.0");
  }
}

TEST_F(TuningSessionTest, MissingCountersAreStoredAsMissing) {
  FakeVariantMeasurer measurer;
  measurer.counters_unavailable = true;
  ::testing::internal::CaptureStderr();
  run(plan(), measurer);
  const std::string notices = ::testing::internal::GetCapturedStderr();
  // Said once for the whole run, not once per variant.
  const auto first = notices.find("profiling unavailable: fake reason");
  ASSERT_NE(first, std::string::npos) << notices;
  EXPECT_EQ(notices.find("profiling unavailable", first + 1), std::string::npos) << notices;
  for (const db::StoredMeasurement& measurement : stored()) {
    EXPECT_EQ(measurement.record.status, db::MeasurementStatus::ok);
    EXPECT_FALSE(measurement.record.l2_sector_misses.has_value());
    EXPECT_FALSE(measurement.record.l2_hit_rate.has_value());
    EXPECT_FALSE(measurement.record.observed_intensity.has_value());
    EXPECT_EQ(measurement.record.method.at("counters"), "unavailable: fake reason");
    EXPECT_EQ(measurement.record.method.at("roofline_bytes"), "compulsory bytes (Q, K, V, O once)");
  }
}

TEST_F(TuningSessionTest, DroppedVariantIsNotRecorded) {
  const std::string victim = six_configs()[3].key();
  FakeVariantMeasurer measurer;
  measurer.drop_when = [&](const VariantJob& job) { return job.config.key() == victim; };
  const TuningSummary summary = run(plan(), measurer);
  EXPECT_TRUE(summary.interrupted);
  EXPECT_EQ(summary.exit_code(), 130);
  for (const db::StoredMeasurement& measurement : stored()) {
    EXPECT_NE(measurement.config_key, victim);
  }
  EXPECT_EQ(stored().size(), measurer.measured_keys.size());
}

TEST_F(TuningSessionTest, BothShapesAreTunedAndKeptApart) {
  TuningPlan both = plan();
  AttentionProblem causal = kProblem;
  causal.causal = true;
  both.shapes.push_back({causal, six_configs()});
  FakeVariantMeasurer measurer;
  const TuningSummary summary = run(both, measurer);
  EXPECT_EQ(summary.recorded, 12);
  const db::ResultsDatabase database(database_path_, db::OpenMode::read_only);
  EXPECT_EQ(database.problem_summaries().size(), 2u);
}

// The form checks after --model-top's top K and spread-out checks: of each kernel form that nothing
// chosen has and whose time the model borrowed from another form, the best-ranked variant, once.
TEST(ModelTopFormChecks, AddTheBestOfEachUnmeasuredFormNotYetChosen) {
  const auto prediction = [](const char* config, bool form_calibrated) {
    model::ModelPrediction p;
    p.config = *AttentionConfig::from_key(config);
    p.config_key = config;
    p.form_calibrated = form_calibrated;
    return p;
  };
  const std::vector<model::ModelPrediction> predictions = {
      prediction("wgmma-m192n128s2-cyclic-dynamic-head_major", true),          // 0
      prediction("wgmma-m192n128s2-ov-pp-cyclic-grid-head_major", false),      // 1
      prediction("wgmma-m192n128s3-ov-pp-cyclic-grid-head_major", false),      // 2
      prediction("wgmma-m192n192s2-ov-pp-psm-cyclic-grid-head_major", false),  // 3
      prediction("wgmma-m192n192s2-psm-cyclic-grid-head_major", true),         // 4
      prediction("wgmma-m192n128s2-psm-cyclic-grid-head_major", false),        // 5
  };
  // Predicted order: 0, 4, 3, 2, 5, 1; the top 1 and one spread-out check (5, a psm variant).
  const std::vector<std::size_t> ranked = {0, 4, 3, 2, 5, 1};
  std::vector<std::size_t> chosen = {0, 5};
  EXPECT_EQ(add_form_checks(predictions, ranked, chosen), 2u);
  // ov-pp-psm's best (3) and ov-pp's best (2, ranked before 1); psm is chosen already and measured.
  EXPECT_EQ(chosen, (std::vector<std::size_t>{0, 5, 3, 2}));
  // Nothing more once every form is in.
  EXPECT_EQ(add_form_checks(predictions, ranked, chosen), 0u);
}

// The backward's single-CTA twins after --model-top's top K and spread-out checks: for each CTA
// pair in the top K, the same variant without pairs, once, where the space has it and nothing chose
// it.
TEST(ModelTopSingleCtaTwins, AddTheTwinOfEachPairInTheTopNotYetChosen) {
  const auto prediction = [](const char* config) {
    model::BackwardPrediction p;
    p.config = *AttentionBackwardConfig::from_key(config);
    p.config_key = config;
    return p;
  };
  const std::vector<model::BackwardPrediction> predictions = {
      prediction("bwd-wgmma-m80n128w12s2-cyclic-grid-head_major-pair-lag"),    // 0
      prediction("bwd-wgmma-m80n128w12s2-cyclic-grid-head_major-pair"),        // 1
      prediction("bwd-wgmma-m80n128w12s2-cyclic-grid-head_major"),             // 2
      prediction("bwd-wgmma-m80n128w12s2-cyclic-grid-head_major-lag"),         // 3
      prediction("bwd-wgmma-m64n128w12s2-sawtooth-grid-head_major-pair-lag"),  // 4
      prediction("bwd-wgmma-m64n128w12s2-sawtooth-grid-head_major-lag"),       // 5
  };
  // Predicted order: 0, 1, 4, 2, 3, 5; the top 3, then one spread-out check (2: pair 1's twin).
  const std::vector<std::size_t> ranked = {0, 1, 4, 2, 3, 5};
  std::vector<std::size_t> chosen = {0, 1, 4, 2};
  EXPECT_EQ(add_single_cta_twins(predictions, ranked, 3, chosen), 2u);
  // 0's twin (3) and 4's twin (5), in the top's order; 1's twin (2) was chosen as a check.
  EXPECT_EQ(chosen, (std::vector<std::size_t>{0, 1, 4, 2, 3, 5}));
  EXPECT_EQ(add_single_cta_twins(predictions, ranked, 3, chosen), 0u);
  // A twin the space lacks (pruned, or not runnable: not in `ranked`) is not added.
  std::vector<std::size_t> without_twins = {0};
  EXPECT_EQ(add_single_cta_twins(predictions, {0, 1, 4}, 1, without_twins), 0u);
  EXPECT_EQ(without_twins, (std::vector<std::size_t>{0}));
}

// --model-top 10 at issue 27's B1 H16 S32768 D128 causal point on the H200: the whole space ranked
// by the model, every pair of the top 10 measured beside its single-CTA twin, each twin's selection
// saying so.
TEST(ModelTopSingleCtaTwins, TheBackwardTuneMeasuresEachTopPairsTwin) {
  AttentionProblem shape;
  shape.batch = 1;
  shape.heads = 16;
  shape.seq_q = shape.seq_kv = 32768;
  shape.head_dim = 128;
  shape.dtype = DataType::bf16;
  shape.causal = true;
  const AttentionBackwardProblem problem{shape};
  const GpuProfile h200 = *find_gpu_profile("h200");
  const std::vector<AttentionBackwardConfig> space =
      AttentionBackwardFamily::space(problem, h200).configs;
  std::map<std::string, nlohmann::json> selection;
  const std::vector<AttentionBackwardConfig> chosen =
      backward_model_guided_variants(problem, h200, space, 10, selection);
  std::set<std::string> keys;
  for (const AttentionBackwardConfig& config : chosen) keys.insert(config.key());
  ASSERT_EQ(keys.size(), chosen.size());  // nothing twice
  int pairs_in_top = 0, twins = 0;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const nlohmann::json& why = selection.at(problem.key() + "/" + chosen[i].key());
    if (why.at("single_cta_twin").get<bool>()) {
      ++twins;
      EXPECT_FALSE(chosen[i].cta_pairs);
    }
    if (i >= 10 || !chosen[i].cta_pairs) continue;
    ++pairs_in_top;
    AttentionBackwardConfig twin = chosen[i];
    twin.cta_pairs = false;
    EXPECT_EQ(keys.count(twin.key()), 1u) << chosen[i].key();
  }
  EXPECT_GT(pairs_in_top, 0);  // the model ranks pairs first at head dim 128
  EXPECT_GT(twins, 0);
  EXPECT_EQ(chosen.size(), 10u + kModelTopChecks + twins);
  EXPECT_EQ(keys.count("bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-lag"), 1u);
}

// --model-top 2 of six variants: the model's two fastest in its order, then three checks spread
// over the other four (ranks 4, 5, 6), each measurement saying how it was chosen.
TEST_F(TuningSessionTest, ModelTopMeasuresTheModelsBestAndSpreadOutChecks) {
  CompileSettings settings;
  settings.jobs = 2;
  settings.cache_dir = SWR_TEST_CUBIN_CACHE;
  std::map<std::string, nlohmann::json> selection;
  const std::vector<AttentionConfig> chosen = model_guided_variants(
      Target{kProblem, *find_gpu_profile("h200")}, six_configs(), 2, settings, selection);
  ASSERT_EQ(chosen.size(), 5u);
  ASSERT_EQ(selection.size(), 5u);
  std::vector<int> ranks;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const nlohmann::json& why = selection.at(kProblem.key() + "/" + chosen[i].key());
    EXPECT_EQ(why.at("rule"), "model top K");
    EXPECT_EQ(why.at("k"), 2);
    EXPECT_EQ(why.at("check"), i >= 2);
    ranks.push_back(why.at("predicted_rank").get<int>());
  }
  EXPECT_EQ(ranks, (std::vector<int>{1, 2, 4, 5, 6}));

  TuningPlan guided = plan(chosen);
  guided.selection = selection;
  FakeVariantMeasurer measurer;
  run(guided, measurer);
  const std::vector<db::StoredMeasurement> measurements = stored();
  EXPECT_EQ(measurements.size(), 5u);
  for (const db::StoredMeasurement& measurement : measurements) {
    EXPECT_EQ(measurement.record.method.at("selection"),
              selection.at(kProblem.key() + "/" + measurement.config_key));
  }

  // The same on two devices (--devices with --model-top): each chosen variant measured once,
  // whichever device took it, and its record says how it was chosen.
  database_path_ = scratch_.path() / "two-devices.db";
  guided.database = database_path_;
  guided.device_names = {"device 0", "device 1"};
  FakeVariantMeasurer a, b;
  a.delay = b.delay = std::chrono::milliseconds(20);
  InterruptFlag interrupt;
  TuningSession session(guided, std::vector<VariantMeasurer*>{&a, &b}, interrupt);
  ::testing::internal::CaptureStdout();
  const TuningSummary summary = session.run();
  ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(summary.recorded, 5);
  EXPECT_EQ(a.measured_keys.size() + b.measured_keys.size(), 5u);
  const std::vector<db::StoredMeasurement> spread = stored();
  ASSERT_EQ(spread.size(), 5u);
  for (const db::StoredMeasurement& measurement : spread) {
    EXPECT_EQ(measurement.record.method.at("selection"),
              selection.at(kProblem.key() + "/" + measurement.config_key));
  }
}

}  // namespace
}  // namespace swr

namespace swr {
namespace {

// --counters none: every variant timed once, none counted, every row says why it has no counters.
TEST_F(TuningSessionTest, CountersNoneTimesOnlyAndMarksEveryRow) {
  TuningPlan none = plan();
  none.counters = CountersPolicy::none;
  FakeVariantMeasurer measurer;
  const TuningSummary summary = run(none, measurer);
  EXPECT_EQ(summary.recorded, 6);
  EXPECT_TRUE(measurer.counted_keys.empty());
  const std::vector<db::StoredMeasurement> rows = stored();
  ASSERT_EQ(rows.size(), 6u);
  for (const db::StoredMeasurement& row : rows) {
    EXPECT_EQ(row.record.counter_status, db::CounterStatus::skipped_by_policy) << row.config_key;
    EXPECT_EQ(row.record.counter_note, "--counters none: timing only");
    EXPECT_FALSE(row.record.l2_sector_misses.has_value());
  }
}

// --counters top with K=1: all six timed without counters, then the fastest and its walk-order
// twin measured again with counters; their new rows are current (the timing-only rows stay as
// history), every other row says skipped_by_policy. A second run counts nothing again.
TEST_F(TuningSessionTest, CountersTopCountsTheFastestAndItsTwinInASecondMeasurement) {
  TuningPlan top = plan();
  top.counters = CountersPolicy::top;
  top.counters_top = 1;
  FakeVariantMeasurer measurer;
  const TuningSummary summary = run(top, measurer);
  EXPECT_EQ(summary.planned, 8);
  EXPECT_EQ(summary.recorded, 8);
  EXPECT_EQ(summary.counted_again, 2);
  ASSERT_EQ(measurer.counted_keys.size(), 2u);
  ASSERT_EQ(measurer.measured_keys.size(), 8u);
  // Both passes on the same inputs: a worker prepares them (and the reference) once.
  EXPECT_EQ(measurer.seeds.size(), 1u);

  std::vector<db::StoredMeasurement> rows = stored();
  ASSERT_EQ(rows.size(), 6u);
  const std::string fastest = rows.front().config_key;
  const std::string twin = *walk_order_twin(fastest);
  EXPECT_EQ(sorted(measurer.counted_keys), sorted({fastest, twin}));
  for (const db::StoredMeasurement& row : rows) {
    const bool counted = row.config_key == fastest || row.config_key == twin;
    EXPECT_EQ(row.record.counter_status,
              counted ? db::CounterStatus::collected : db::CounterStatus::skipped_by_policy)
        << row.config_key;
    EXPECT_EQ(row.record.l2_sector_misses.has_value(), counted) << row.config_key;
    if (!counted) EXPECT_NE(row.record.counter_note.find("--counters top"), std::string::npos);
  }
  {
    SQLite::Database raw(database_path_.string(), SQLite::OPEN_READONLY);
    EXPECT_EQ(raw.execAndGet("SELECT COUNT(*) FROM measurements").getInt(), 8);
  }

  FakeVariantMeasurer again;
  const TuningSummary second = run(top, again);
  EXPECT_EQ(second.recorded, 0);
  EXPECT_TRUE(again.measured_keys.empty());
}

// A top run stopped in its timing pass resumes: the rest is timed, then the selection counted.
TEST_F(TuningSessionTest, CountersTopStoppedInTheTimingPassResumesBothPasses) {
  TuningPlan top = plan();
  top.counters = CountersPolicy::top;
  top.counters_top = 1;
  InterruptFlag interrupt;
  FakeVariantMeasurer first;
  first.after_each = [&interrupt](int measured) {
    if (measured == 3) interrupt.raise();
  };
  const TuningSummary stopped = run(top, first, interrupt);
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.recorded, 3);
  EXPECT_TRUE(first.counted_keys.empty());

  FakeVariantMeasurer second;
  const TuningSummary resumed = run(top, second);
  EXPECT_EQ(resumed.recorded, 3 + 2);
  EXPECT_EQ(second.counted_keys.size(), 2u);
  const std::vector<db::StoredMeasurement> rows = stored();
  ASSERT_EQ(rows.size(), 6u);
  int collected = 0;
  for (const db::StoredMeasurement& row : rows) {
    collected += row.record.counter_status == db::CounterStatus::collected ? 1 : 0;
  }
  EXPECT_EQ(collected, 2);
}

// Profiling unavailable: the rows say so with the reason, and the run goes on.
TEST_F(TuningSessionTest, UnavailableProfilerMarksRowsWithItsReason) {
  FakeVariantMeasurer measurer;
  measurer.counters_unavailable = true;
  EXPECT_EQ(run(plan(), measurer).recorded, 6);
  for (const db::StoredMeasurement& row : stored()) {
    EXPECT_EQ(row.record.counter_status, db::CounterStatus::unavailable);
    EXPECT_EQ(row.record.counter_note, "profiling unavailable: fake reason");
  }
}

// The run's end says where each device's time went: checking and timing, L2 counters, loading.
TEST_F(TuningSessionTest, TheEndSaysTheTimeSplit) {
  FakeVariantMeasurer measurer;
  ::testing::internal::CaptureStdout();
  run(plan(), measurer);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("time split: check and timing 0.0s, L2 counters 0.0s (3.0 ms a variant), "
                     "waiting for the profiler 0.0s, loading 0.0s, other "),
            std::string::npos)
      << out;
}

TEST(VariantTime, CountersInTheirOwnSessionAreOutOfTheTimingBatchedOnesCameAfter) {
  const nlohmann::json alone = {
      {"host_ms", {{"load", 1.0}, {"check_time_count", 10.0}, {"counters", 6.0}}}};
  const VariantTime own = variant_time(alone);
  EXPECT_EQ(own.timing_ms, 4.0);
  EXPECT_EQ(own.counters_ms, 6.0);
  EXPECT_EQ(own.load_ms, 1.0);
  nlohmann::json batched = alone;
  batched["counter_batch"] = {{"variants", 32}, {"sessions", 1}};
  EXPECT_EQ(variant_time(batched).timing_ms, 10.0);
  EXPECT_EQ(variant_time(nlohmann::json::object()).timing_ms, 0.0);
}

}  // namespace
}  // namespace swr
