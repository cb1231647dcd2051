// The GEMM tuning session with a fake measurer in place of the GPU (real NVRTC, real SQLite):
// cuBLAS measured once per shape (and device) before the variants, every variant committed with its
// cuBLAS time, a second run resumes (measures nothing), "cuBLAS not found" leaves tuning going, and
// the sweep tables compute best stride, sensitivity and ratio as the paper defines them.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "db/results_database.hpp"
#include "generator/gemm_space.hpp"
#include "run_swr_tune.hpp"
#include "tuner/tuning/gemm_sweep_report.hpp"
#include "tuner/tuning/gemm_tuning_session.hpp"

namespace swr {
namespace {

class FakeGemmMeasurer : public GemmVariantMeasurer {
 public:
  std::vector<std::string> asked;  // "cublas" or config keys, in order
  bool cublas_missing = false;
  double ms_per_cublas = 1.0;
  std::chrono::milliseconds delay{0};

  VariantOutcome measure(const GemmVariantJob& job) override {
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    VariantOutcome outcome;
    if (job.cublas) {
      asked.push_back("cublas");
      if (cublas_missing) {
        outcome.status = db::MeasurementStatus::launch_error;
        outcome.error = "cuBLAS not found (libcublas.so.13 or .12)";
        return outcome;
      }
      outcome.times_ms = {ms_per_cublas, ms_per_cublas, ms_per_cublas};
      outcome.method = {{"baseline", "cuBLAS fake"}};
      return outcome;
    }
    asked.push_back(job.config.key());
    EXPECT_FALSE(job.cubin.empty());
    const double ms = 1.5 + job.config.swizzle_stride / 10000.0;
    outcome.times_ms = {ms, ms, ms};
    outcome.relative_error = 1e-4;
    return outcome;
  }
};

GemmTuningPlan plan_for(const std::filesystem::path& database, std::vector<GemmConfig> configs) {
  GemmTuningPlan plan;
  plan.gpu = *find_gpu_profile("h200");
  plan.driver_version = "test-driver 13.0";
  plan.shapes = {{GemmProblem{1000, 1000, 1000, DataType::f16}, std::move(configs)}};
  plan.database = database;
  plan.cubin_cache = database.parent_path() / "cubins";
  plan.compile_threads = 2;
  return plan;
}

std::vector<GemmConfig> three_strides() {
  const GemmConfig binary = *GemmConfig::from_key("m128n128k32w2x4s3-grid-swz0");
  return {binary, with_swizzle(binary, 256, SwizzleAxis::n),
          with_swizzle(binary, 512, SwizzleAxis::m)};
}

TEST(GemmTuningSession, MeasuresCublasFirstThenEveryVariantAndResumes) {
  test::TemporaryDirectory directory;
  const auto database = directory.path() / "results.db";
  FakeGemmMeasurer measurer;
  InterruptFlag interrupt;
  {
    GemmTuningSession session(plan_for(database, three_strides()), measurer, interrupt);
    const GemmTuningSummary summary = session.run();
    EXPECT_EQ(summary.recorded, 3);
    EXPECT_EQ(summary.failed, 0);
    ASSERT_EQ(summary.baselines.size(), 1u);
    EXPECT_EQ(summary.baselines[0].median_ms, 1.0);
  }
  const std::vector<std::string> expected = {"cublas", "m128n128k32w2x4s3-grid-swz0",
                                             "m128n128k32w2x4s3-grid-swzn256",
                                             "m128n128k32w2x4s3-grid-swzm512"};
  EXPECT_EQ(measurer.asked, expected);

  db::ResultsDatabase results(database, db::OpenMode::read_only);
  const auto gpu = results.gpus_named("h200");
  ASSERT_EQ(gpu.size(), 1u);
  const auto problem = results.find_problem(GemmProblem{1000, 1000, 1000, DataType::f16});
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(results.problem(*problem).family, "gemm");
  EXPECT_EQ(results.problem(*problem).json.at("m"), 1000);
  const auto measurements = results.measurements_for(gpu.front().id, *problem);
  ASSERT_EQ(measurements.size(), 3u);
  EXPECT_EQ(measurements.front().config_key, "m128n128k32w2x4s3-grid-swz0");  // the fastest
  EXPECT_EQ(measurements.front().config_json.at("swizzle_stride"), 0);
  EXPECT_DOUBLE_EQ(measurements.front().record.method.at("cublas_median_ms").get<double>(), 1.0);
  EXPECT_NEAR(*measurements.front().record.tflops, 2e9 / 1.5e-3 / 1e12, 1e-9);

  // The same command again measures nothing, not even cuBLAS.
  FakeGemmMeasurer second;
  GemmTuningSession again(plan_for(database, three_strides()), second, interrupt);
  EXPECT_EQ(again.run().already_measured, 3);
  EXPECT_TRUE(second.asked.empty());
}

TEST(GemmTuningSession, OnTwoDevicesEachMeasuresCublasBeforeItsFirstVariantOfAShape) {
  test::TemporaryDirectory directory;
  const auto database = directory.path() / "results.db";
  FakeGemmMeasurer first, second;
  first.ms_per_cublas = 1.0;
  second.ms_per_cublas = 2.0;
  first.delay = second.delay = std::chrono::milliseconds(30);
  InterruptFlag interrupt;
  GemmTuningPlan plan = plan_for(database, three_strides());
  plan.device_names = {"device 0", "device 1"};
  GemmTuningSession session(plan, std::vector<GemmVariantMeasurer*>{&first, &second}, interrupt);
  const GemmTuningSummary summary = session.run();
  EXPECT_EQ(summary.recorded, 3);
  std::vector<std::string> variants;
  for (const FakeGemmMeasurer* device : {&first, &second}) {
    if (device->asked.empty()) continue;
    EXPECT_EQ(device->asked.front(), "cublas");  // its own baseline, before its first variant
    EXPECT_EQ(std::count(device->asked.begin(), device->asked.end(), "cublas"), 1);
    variants.insert(variants.end(), device->asked.begin() + 1, device->asked.end());
  }
  std::sort(variants.begin(), variants.end());
  EXPECT_EQ(variants, (std::vector<std::string>{"m128n128k32w2x4s3-grid-swz0",
                                                "m128n128k32w2x4s3-grid-swzm512",
                                                "m128n128k32w2x4s3-grid-swzn256"}));
  // Each row carries the cuBLAS time of the device that measured it.
  const db::ResultsDatabase results(database, db::OpenMode::read_only);
  const auto problem = results.find_problem(GemmProblem{1000, 1000, 1000, DataType::f16});
  const auto measurements =
      results.measurements_for(results.gpus_named("h200").front().id, *problem);
  ASSERT_EQ(measurements.size(), 3u);
  for (const db::StoredMeasurement& m : measurements) {
    const std::vector<std::string>& first_asked = first.asked;
    const bool on_first =
        std::find(first_asked.begin(), first_asked.end(), m.config_key) != first_asked.end();
    EXPECT_DOUBLE_EQ(m.record.method.at("cublas_median_ms").get<double>(), on_first ? 1.0 : 2.0)
        << m.config_key;
  }
}

TEST(GemmTuningSession, MissingCublasLeavesTuningGoing) {
  test::TemporaryDirectory directory;
  FakeGemmMeasurer measurer;
  measurer.cublas_missing = true;
  InterruptFlag interrupt;
  GemmTuningSession session(plan_for(directory.path() / "results.db", three_strides()), measurer,
                            interrupt);
  const GemmTuningSummary summary = session.run();
  EXPECT_EQ(summary.recorded, 3);
  EXPECT_FALSE(summary.baselines[0].median_ms.has_value());
  EXPECT_NE(summary.baselines[0].note.find("cuBLAS not found"), std::string::npos);
}

TEST(GemmSweepReport, BestStrideSensitivityAndRatio) {
  GemmSweepRow row;
  row.size = 4096;
  row.cublas_ms = 0.2;
  row.cells = {{0, 0.40, "row-major"}, {512, 0.32, "n-bands-2"}, {1792, std::nullopt, ""}};
  const GemmSweepSummary summary = summarize_sweep_row(row);
  EXPECT_EQ(summary.best_stride, 512);
  EXPECT_EQ(summary.strides_measured, 2);
  EXPECT_NEAR(*summary.sensitivity, (1 / 0.32 - 1 / 0.40) / (1 / 0.32), 1e-12);
  EXPECT_NEAR(*summary.ratio_to_cublas, 0.2 / 0.32, 1e-12);
  const std::string markdown =
      gemm_sweep_markdown({row}, *find_gpu_profile("h200"), "m128n256k32w2x4s4-grid", "f16", "x");
  EXPECT_NE(markdown.find("| 4096³ | 512 |"), std::string::npos) << markdown;
  EXPECT_NE(gemm_sweep_csv({row}).find("4096,512,n-bands-2,0.32"), std::string::npos);
}

TEST(GemmCommandLine, BadInputIsOneLineAndExitTwo) {
  test::TemporaryDirectory directory;
  const std::map<std::string, std::string> environment = {
      {"SWR_DB", (directory.path() / "results.db").string()}};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--family", "gemm", "--gpu", "h200", "--size", "0"}, "bad --size '0'"},
      {{"--family", "gemm", "--gpu", "h200", "--m", "0", "--n", "64", "--k", "64"}, "bad --m"},
      {{"--family", "gemm", "--gpu", "h200", "--m", "64", "--n", "64", "--k", "100"},
       "k must be a multiple of 8"},
      {{"--family", "gemm", "--gpu", "h200", "--m", "64", "--n", "12", "--k", "64"},
       "n must be a multiple of 8"},
      {{"--family", "gemm", "--gpu", "h200", "--m", "65536", "--n", "65536", "--k", "64"},
       "32-bit indexing"},
      {{"--family", "gemm", "--gpu", "h200"}, "missing GEMM size"},
      {{"--family", "gemm", "--gpu", "h200", "--size", "512", "--seq", "512"}, "--seq belongs"},
      {{"--family", "gemm", "--gpu", "h200", "--sweep", "--size", "512"}, "--sweep runs"},
      {{"--family", "gemm", "--gpu", "h200", "--size", "512", "--config", "m1"}, "bad --config"},
      {{"--family", "conv", "--gpu", "h200"}, "bad --family"},
      {{"--gpu", "h200", "--size", "512"}, "--family gemm"},
      // A wgmma variant for a target without sm_90a names the arch.
      {{"--family", "gemm", "--gpu", "gb10", "--size", "512", "--config",
        "wgmma-m128n256k64s3-cooperative-c1x1-static-swz0"},
       "wgmma variants need sm_90a (H100/H200); gb10 is sm_121"},
      {{"--family", "gemm", "--gpu", "gb10", "--sweep", "--config",
        "wgmma-m128n256k64s3-cooperative-c1x1-static-swz0"},
       "gb10 is sm_121"},
      {{"--family", "gemm", "--gpu", "h200", "--size", "512", "--config",
        "wgmma-m128n256k64s3-cooperative-c4x1-static-swz0"},
       "cluster 4x1 must be 1x1, 2x1, 1x2 or 2x2"},
      {{"--family", "gemm", "--gpu", "h200", "--size", "512", "--config",
        "wgmma-m128n256k64s3-cooperative-c1x2-dynamic-swz0"},
       "a 1x2 cluster needs static or stream-K persistence"},
      {{"--family", "gemm", "--gpu", "h200", "--size", "512", "--config",
        "wgmma-m128n256k64s3-cooperative-c2x2-dynamic-swz0"},
       "a 2x2 cluster needs static or stream-K persistence"},
      {{"--family", "gemm", "--gpu", "h200", "--size", "512", "--config",
        "wgmma-m64n256k64s4-pingpong-c2x2-streamk-swz0"},
       "stream-K persistence needs the cooperative consumer mode"},
      {{"--family", "gemm", "--gpu", "h200", "--size", "512", "--config",
        "wgmma-m128n200k64s4-cooperative-c2x2-static-swz0"},
       "block_n 200 must be 64..256 in steps of 16"},
  };
  for (const auto& [arguments, fragment] : cases) {
    const test::ProcessResult result = test::run_swr_tune(arguments, environment);
    EXPECT_EQ(result.exit_code, 2) << fragment << "\n" << result.err;
    EXPECT_NE(result.err.find(fragment), std::string::npos) << result.err;
    EXPECT_EQ(test::lines_of(result.err).size(), 1u) << result.err;
    EXPECT_FALSE(std::filesystem::exists(directory.path() / "results.db")) << fragment;
  }
}

}  // namespace
}  // namespace swr
