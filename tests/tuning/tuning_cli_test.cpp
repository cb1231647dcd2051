// swr-tune as a user runs it: the tuning options' bad input (exit 2, nothing written, before any
// work), the main job without the named GPU, and `show` over a real results database.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "db/results_database.hpp"
#include "driver/cuda_driver.hpp"
#include "run_swr_tune.hpp"

namespace swr::test {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class TuningCommandLine : public ::testing::Test {
 protected:
  ProcessResult tune(std::vector<std::string> extra) {
    std::vector<std::string> arguments = {
        "--gpu", "h200",    "--seq", "256",         "--batch",
        "1",     "--heads", "2",     "--cache-dir", cache_.string()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return run_swr_tune(arguments, environment_);
  }
  // Bad input: exit 2, one line naming the value, nothing compiled.
  void expect_refused(const ProcessResult& result, const std::string& message) {
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_EQ(result.err.rfind("swr-tune: error: ", 0), 0u) << result.err;
    EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
    EXPECT_FALSE(std::filesystem::exists(cache_)) << "compiled before refusing";
  }

  TemporaryDirectory scratch_;
  std::filesystem::path cache_ = scratch_.path() / "cubins";
  // Nothing of a test may land in the user's own cache directory.
  std::map<std::string, std::string> environment_ = {
      {"XDG_CACHE_HOME", (scratch_.path() / "xdg").string()}, {"SWR_DB", ""}};
};

TEST_F(TuningCommandLine, FileThatIsNotSqliteIsRefusedAndLeftAlone) {
  const auto path = scratch_.path() / "notes.txt";
  std::ofstream(path) << "my notes, not a database\n";
  expect_refused(tune({"--db", path.string()}), "is not an swr results database (not SQLite)");
  EXPECT_EQ(read_file(path), "my notes, not a database\n");
}

TEST_F(TuningCommandLine, MissingDatabaseDirectoryIsRefusedBeforeAnyWork) {
  const auto path = scratch_.path() / "no" / "such" / "dir" / "results.db";
  expect_refused(tune({"--db", path.string()}), "does not exist");
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() / "no"));
}

TEST_F(TuningCommandLine, ReadOnlyDatabaseDirectoryIsRefusedBeforeAnyWork) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  const auto directory = scratch_.path() / "read-only";
  std::filesystem::create_directory(directory);
  chmod(directory.c_str(), 0555);
  expect_refused(tune({"--db", (directory / "results.db").string()}), directory.string());
  chmod(directory.c_str(), 0755);
  EXPECT_TRUE(std::filesystem::is_empty(directory));
}

TEST_F(TuningCommandLine, SwrDbEnvironmentNamesTheDatabaseToo) {
  const auto path = scratch_.path() / "fake.db";
  std::ofstream(path) << "SQLite format 2\n";
  environment_["SWR_DB"] = path.string();
  expect_refused(tune({}), path.string());
}

TEST_F(TuningCommandLine, LimitAndTimeBudgetExcludeEachOther) {
  expect_refused(tune({"--limit", "3", "--time-budget", "60"}),
                 "--limit and --time-budget exclude each other");
}

TEST_F(TuningCommandLine, BadTimeBudgetsAreRefused) {
  for (const std::string bad : {"0", "-5", "soon", "1e999", "nan"}) {
    expect_refused(tune({"--time-budget", bad}), "bad --time-budget '" + bad + "'");
  }
}

TEST_F(TuningCommandLine, BadModelTopIsRefused) {
  for (const std::string bad : {"0", "-3", "ten", "1.5"}) {
    expect_refused(tune({"--model-top", bad}), "bad --model-top '" + bad + "'");
  }
}

// --counters takes all, top or none: anything else is one line naming it and the three, exit 2,
// before anything is written; --counters-top needs top and a positive K. Every family, and a plan.
TEST_F(TuningCommandLine, BadCountersPolicyIsRefused) {
  for (const std::string bad : {"some", "ALL", "top5"}) {
    const ProcessResult result = tune({"--counters", bad});
    expect_refused(result, "bad --counters '" + bad + "': allowed all");
    EXPECT_NE(result.err.find("top"), std::string::npos);
    EXPECT_NE(result.err.find("none"), std::string::npos);
  }
  expect_refused(tune({"--counters-top", "3"}), "--counters-top 3 needs --counters top");
  for (const std::string bad : {"0", "-1", "many"}) {
    expect_refused(tune({"--counters", "top", "--counters-top", bad}),
                   "bad --counters-top '" + bad + "'");
  }
  for (const std::vector<std::string>& family :
       {std::vector<std::string>{"--family", "gemm", "--gpu", "h200", "--size", "1024"},
        std::vector<std::string>{"--family", "attention-backward", "--gpu", "h200", "--seq",
                                 "1024"}}) {
    std::vector<std::string> arguments = {"tune"};
    arguments.insert(arguments.end(), family.begin(), family.end());
    arguments.insert(arguments.end(), {"--counters", "most", "--cache-dir", cache_.string()});
    const ProcessResult result = run_swr_tune(arguments, environment_);
    expect_refused(result, "bad --counters 'most'");
  }
}

TEST_F(TuningCommandLine, ModelTopIsForAttention) {
  const ProcessResult result =
      run_swr_tune({"tune", "--family", "gemm", "--gpu", "h200", "--size", "1024", "--model-top",
                    "5", "--cache-dir", cache_.string()},
                   environment_);
  expect_refused(result, "--model-top ranks attention variants");
}

// --model-top with a plan: each attention problem of it is narrowed to the model's best (and the
// shards split what is left, Shard.AChoiceNarrowsEachProblemBeforeTheShardsSplitIt); a plan that
// lists GEMM problems is refused, as --family gemm is, before anything is compiled.
TEST_F(TuningCommandLine, ModelTopWithAPlanOfGemmProblemsIsRefused) {
  const auto plan = scratch_.path() / "plan.json";
  std::ofstream(plan) << R"({"version": 1, "attention": [{"seq": 256}], "gemm": [{"size": 512}]})";
  const ProcessResult result =
      run_swr_tune({"--gpu", "h200", "--plan", plan.string(), "--model-top", "5", "--cache-dir",
                    cache_.string(), "--db", (scratch_.path() / "results.db").string()},
                   environment_);
  expect_refused(result, "--model-top ranks attention variants and " + plan.string() +
                             " lists 1 GEMM problems: allowed with --model-top are plans of "
                             "attention problems only");
}

TEST_F(TuningCommandLine, ModelTopWithAnAttentionPlanRanksWithoutTheGpu) {
  if (CudaDriver::try_get() != nullptr) GTEST_SKIP() << "a CUDA driver is present";
  const auto plan = scratch_.path() / "plan.json";
  std::ofstream(plan) << R"({"version": 1, "attention": [{"seq": 256, "batch": 1, "heads": 4,
      "kv_heads": 2, "configs": ["m64n64w4s1-cyclic-grid-head_major",
                                 "m64n64w4s1-sawtooth-grid-head_major"]}]})";
  const ProcessResult result =
      run_swr_tune({"--gpu", "h200", "--plan", plan.string(), "--model-top", "1", "--cache-dir",
                    cache_.string(), "--db", (scratch_.path() / "results.db").string()},
                   environment_);
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("plan " + plan.string() + ": 1 attention and 0 GEMM problems"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("these times are PREDICTIONS"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("--model-top 1 chooses what to measure where the GPU is present"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("stored 2 predictions"), std::string::npos) << result.out;
}

TEST_F(TuningCommandLine, BothAndCausalExcludeEachOther) {
  expect_refused(tune({"--both", "--causal"}), "--both and --causal exclude each other");
}

TEST_F(TuningCommandLine, WithoutTheNamedGpuItRanksByTheModelAndStoresOnlyPredictions) {
  if (CudaDriver::try_get() != nullptr) GTEST_SKIP() << "a CUDA driver is present";
  const auto database = scratch_.path() / "results.db";
  const ProcessResult result = tune({"--db", database.string(), "--limit", "1", "--both"});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("timing needs the h200 GPU: no CUDA driver/device found"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("nothing timed (compiled 2 variants for sm_90a"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("L2 model for"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("stored 1 predictions"), std::string::npos) << result.out;

  // The ranking is in the predictions table, one per shape; no measurement was made up.
  const db::ResultsDatabase results(database, db::OpenMode::read_only);
  const std::vector<db::ProblemSummary> measured = results.problem_summaries();
  EXPECT_TRUE(measured.empty());
  const std::vector<db::StoredGpu> gpus = results.gpus_named("h200");
  ASSERT_EQ(gpus.size(), 1u);
  int predictions = 0;
  for (const bool causal : {false, true}) {
    AttentionProblem problem;
    problem.batch = 1;
    problem.heads = 2;
    problem.seq_q = problem.seq_kv = 256;
    problem.head_dim = 64;
    problem.causal = causal;
    const std::optional<db::ProblemId> id = results.find_problem(problem);
    if (!id) continue;
    for (const db::StoredPrediction& prediction : results.predictions_for(gpus[0].id, *id)) {
      EXPECT_EQ(prediction.record.model_name, "schedule_simulator");
      EXPECT_GT(prediction.record.sector_misses.value_or(0), 0);
      ++predictions;
    }
  }
  EXPECT_EQ(predictions, 2);

  // `show` prints them as predictions.
  const ProcessResult shown = run_swr_tune({"show", "--db", database.string(), "--gpu", "h200",
                                            "--seq", "256", "--batch", "1", "--heads", "2"},
                                           environment_);
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("PREDICTED by the L2 model, not measured"), std::string::npos)
      << shown.out;
}

TEST_F(TuningCommandLine, BadDevicesAreRefusedBeforeAnyWork) {
  for (const std::string bad : {"x", "0,0", "1,", "-1", "ALL"}) {
    expect_refused(tune({"--devices", bad}), "bad --devices '" + bad + "'");
  }
  if (CudaDriver::try_get() == nullptr) {
    // Without a device, an index asks for what is not there: refused, not compiled for.
    expect_refused(tune({"--devices", "7"}), "bad --devices '7': there is no device 7");
    expect_refused(tune({"--devices", "all", "--no-wait"}), "bad --devices 'all': no h200 here");
  }
}

TEST_F(TuningCommandLine, BadShardsAreRefusedBeforeAnyWork) {
  for (const std::string bad : {"3/2", "0/0", "a/b", "1", "2/2", "0/5000"}) {
    expect_refused(tune({"--shard", bad}), "bad --shard '" + bad + "': allowed I/N");
  }
  if (CudaDriver::try_get() == nullptr) {
    expect_refused(tune({"--shard", "0/2"}), "--shard 0/2 splits the measuring of a plan");
  }
}

TEST_F(TuningCommandLine, BadPlansAreRefusedBeforeAnyWork) {
  const auto plan = scratch_.path() / "plan.json";
  const auto database = scratch_.path() / "results.db";
  const std::pair<std::string, std::string> cases[] = {
      {R"({"version": 1, "attention": [{"seq": 512, "head_dim": 100}]})",
       "attention[0].head_dim: 100 is not supported"},
      {R"({"version": 1, "gemm": [{"size": 512, "colour": "red"}]})", "unknown key 'colour'"},
      {R"({"version": 1, "attention": [{"seq": 512}], "attention": []})", "given twice"},
      {R"({"version": 1, "gemm": [{"m": 512, "n": 100, "k": 64}]})", "GEMM n 100"},
      // A config key that exists but does not fit: found once the space is chosen, still before
      // anything is compiled.
      {R"({"version": 1, "attention": [
          {"seq": 256, "batch": 1, "configs": ["m64n64w4s1-cyclic-grid-head_major"]},
          {"seq": 256, "head_dim": 128, "configs": ["m128n256w8s4-cyclic-grid-head_major"]}]})",
       "m128n256w8s4-cyclic-grid-head_major"},
  };
  for (const auto& [text, message] : cases) {
    std::ofstream(plan) << text;
    const ProcessResult result =
        run_swr_tune({"--gpu", "h200", "--plan", plan.string(), "--cache-dir", cache_.string(),
                      "--db", database.string()},
                     environment_);
    EXPECT_EQ(result.exit_code, 2) << text << result.out << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(cache_)) << "compiled before refusing: " << text;
    EXPECT_FALSE(std::filesystem::exists(database)) << "wrote the database: " << text;
  }
  const std::filesystem::path fifo = scratch_.path() / "plan.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(tune({"--plan", fifo.string()}), "--seq and --plan exclude each other");
  const ProcessResult pipe_plan = run_swr_tune(
      {"--gpu", "h200", "--plan", fifo.string(), "--cache-dir", cache_.string()}, environment_);
  EXPECT_EQ(pipe_plan.exit_code, 2);
  EXPECT_NE(pipe_plan.err.find("a named pipe, not a regular file"), std::string::npos)
      << pipe_plan.err;
}

TEST_F(TuningCommandLine, APlanWithoutTheGpuCompilesBothFamiliesAndPredictsAttention) {
  if (CudaDriver::try_get() != nullptr) GTEST_SKIP() << "a CUDA driver is present";
  const auto plan = scratch_.path() / "plan.json";
  std::ofstream(plan) << R"({"version": 1,
      "attention": [{"seq": [256, 512], "batch": 1, "heads": 2,
                     "configs": ["m64n64w4s1-cyclic-grid-head_major"]}],
      "gemm": [{"size": 256, "configs": ["m128n128k32w2x4s2-grid-swz0"]},
               {"size": 256, "configs": ["m128n128k32w2x4s2-grid-swzn256"]}]})";
  const auto database = scratch_.path() / "results.db";
  const ProcessResult result =
      run_swr_tune({"--gpu", "h200", "--plan", plan.string(), "--cache-dir", cache_.string(),
                    "--db", database.string()},
                   environment_);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("plan " + plan.string() +
                            ": 2 attention and 1 GEMM problems (1 named more than once, tuned "
                            "once)"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("tuning b1_h2_sq512_skv512_d64_f16_noncausal on h200"),
            std::string::npos);
  EXPECT_NE(result.out.find("stored 1 predictions"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("gemm m256_n256_k256_f16: "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("nothing timed"), std::string::npos) << result.out;
}

TEST_F(TuningCommandLine, PlantFaultIsHiddenFromHelp) {
  const ProcessResult help = run_swr_tune({"tune", "--help"}, environment_);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out.find("--plant-fault"), std::string::npos) << help.out;
  for (const char* option : {"--db", "--time-budget", "--both", "--retune", "--limit", "--devices",
                             "--no-wait", "--plan", "--shard"}) {
    EXPECT_NE(help.out.find(option), std::string::npos) << option;
  }
}

// A results database with one GPU, two shapes, and ok and failed variants.
class ShowCommand : public TuningCommandLine {
 protected:
  void SetUp() override {
    db::ResultsDatabase database(database_);
    db::GpuRecord gpu;
    gpu.name = "h200";
    gpu.arch = "sm_90a";
    gpu.sm_count = 132;
    gpu.l2_bytes = 60 * 1024 * 1024;
    gpu.device_name = "NVIDIA H200";
    gpu.driver_version = "13.0";
    gpu.cuda_version = "13.0";
    const db::GpuId gpu_id = database.upsert_gpu(gpu);
    const db::ProblemId shape = database.upsert_problem(shape_);
    AttentionProblem other = shape_;
    other.causal = true;
    const db::ProblemId other_id = database.upsert_problem(other);
    const std::vector<std::pair<std::string, double>> variants = {
        {"m64n64w4s1-cyclic-grid-head_major", 2.0},
        {"m64n64w4s1-sawtooth-grid-head_major", 1.5},
        {"m64n64w4s1-cyclic-static-head_major", 3.0}};
    for (const auto& [key, ms] : variants) {
      db::MeasurementRecord record;
      record.gpu = gpu_id;
      record.problem = shape;
      record.config = database.upsert_config(*AttentionConfig::from_key(key));
      record.median_ms = ms;
      record.p95_ms = ms * 1.1;
      record.min_ms = ms * 0.9;
      record.timed_runs = 5;
      record.tflops = 10 / ms;
      record.l2_sector_misses = ms * 1e6;
      record.l2_hit_rate = 0.75;
      record.dram_read_bytes = 3e8;
      record.method = {{"timer", "events"}};
      database.record_measurement(record);
    }
    db::MeasurementRecord fault;
    fault.gpu = gpu_id;
    fault.problem = shape;
    fault.config = database.upsert_config(*AttentionConfig::from_key(failed_key_));
    fault.status = db::MeasurementStatus::fault;
    fault.error = "the measurement worker died while measuring: worker killed by signal 11";
    database.record_measurement(fault);
    db::MeasurementRecord causal;
    causal.gpu = gpu_id;
    causal.problem = other_id;
    causal.config = database.upsert_config(*AttentionConfig::from_key(variants[0].first));
    causal.median_ms = 1.25;
    database.record_measurement(causal);
  }
  ProcessResult show(std::vector<std::string> extra) {
    std::vector<std::string> arguments = {"show", "--db", database_.string()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return run_swr_tune(arguments, environment_);
  }

  std::filesystem::path database_ = scratch_.path() / "results.db";
  AttentionProblem shape_{1, 2, 256, 256, 64, DataType::f16, false};
  std::string failed_key_ = "m64n64w4s1-sawtooth-static-head_major";
};

TEST_F(ShowCommand, SummaryHasOneLinePerGpuAndShape) {
  const ProcessResult result = show({});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 4u) << result.out;  // title, header, two shapes
  const std::string& non_causal =
      lines[2].find("noncausal") != std::string::npos ? lines[2] : lines[3];
  EXPECT_NE(non_causal.find("h200"), std::string::npos) << result.out;
  EXPECT_NE(non_causal.find("m64n64w4s1-sawtooth-grid-head_major"), std::string::npos)
      << result.out;
  EXPECT_NE(non_causal.find("1.500"), std::string::npos) << result.out;
  EXPECT_NE(non_causal.find("75.0%"), std::string::npos) << result.out;
  // The last two columns: 4 measured, 1 failed.
  std::istringstream words(non_causal);
  std::vector<std::string> cells{std::istream_iterator<std::string>(words),
                                 std::istream_iterator<std::string>()};
  ASSERT_GE(cells.size(), 2u);
  EXPECT_EQ(cells[cells.size() - 2], "4") << non_causal;
  EXPECT_EQ(cells.back(), "1") << non_causal;
}

TEST_F(ShowCommand, SummaryFiltersAndJson) {
  const ProcessResult causal_only = show({"--causal", "--json"});
  ASSERT_EQ(causal_only.exit_code, 0) << causal_only.err;
  const nlohmann::json json = nlohmann::json::parse(causal_only.out);
  EXPECT_EQ(json.at("database"), database_.string());
  ASSERT_EQ(json.at("results").size(), 1u);
  const nlohmann::json& entry = json.at("results")[0];
  EXPECT_EQ(entry.at("gpu").at("name"), "h200");
  EXPECT_EQ(entry.at("problem").at("causal"), true);
  EXPECT_EQ(entry.at("best").at("median_ms"), 1.25);
  EXPECT_EQ(entry.at("variants_measured"), 1);

  const ProcessResult other_gpu = show({"--gpu", "gb10"});
  EXPECT_EQ(other_gpu.exit_code, 0);
  EXPECT_NE(other_gpu.out.find("no results"), std::string::npos) << other_gpu.out;
  const ProcessResult head_dim = show({"--head-dim", "128", "--json"});
  EXPECT_EQ(nlohmann::json::parse(head_dim.out).at("results").size(), 0u);
}

TEST_F(ShowCommand, OneShapeListsEveryVariantFastestFirstFailedLast) {
  const ProcessResult result =
      show({"--gpu", "h200", "--seq", "256", "--batch", "1", "--heads", "2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string& out = result.out;
  const auto fastest = out.find("m64n64w4s1-sawtooth-grid-head_major");
  const auto middle = out.find("m64n64w4s1-cyclic-grid-head_major");
  const auto slowest = out.find("m64n64w4s1-cyclic-static-head_major");
  const auto failed = out.find(failed_key_ + "  fault");
  ASSERT_NE(failed, std::string::npos) << out;
  EXPECT_LT(fastest, middle);
  EXPECT_LT(middle, slowest);
  EXPECT_LT(slowest, failed);
  EXPECT_NE(out.find("killed by signal 11"), std::string::npos) << out;
  EXPECT_NE(out.find("best cyclic vs best sawtooth"), std::string::npos) << out;

  const ProcessResult json_result =
      show({"--seq", "256", "--batch", "1", "--heads", "2", "--json"});
  const nlohmann::json json = nlohmann::json::parse(json_result.out);
  ASSERT_EQ(json.at("results").size(), 1u);
  const nlohmann::json& variants = json.at("results")[0].at("variants");
  ASSERT_EQ(variants.size(), 4u);
  EXPECT_EQ(variants[0].at("config_key"), "m64n64w4s1-sawtooth-grid-head_major");
  EXPECT_EQ(variants[0].at("status"), "ok");
  EXPECT_EQ(variants[0].at("l2_hit_rate"), 0.75);
  EXPECT_TRUE(variants[0].at("dram_write_bytes").is_null());
  EXPECT_EQ(variants[3].at("status"), "fault");
  EXPECT_TRUE(variants[3].at("median_ms").is_null());
}

TEST_F(ShowCommand, ReadsWithoutWriting) {
  const auto before = std::filesystem::last_write_time(database_);
  const auto size = std::filesystem::file_size(database_);
  chmod(database_.c_str(), 0444);
  const ProcessResult result = show({"--seq", "256", "--batch", "1", "--heads", "2"});
  chmod(database_.c_str(), 0644);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(std::filesystem::last_write_time(database_), before);
  EXPECT_EQ(std::filesystem::file_size(database_), size);
}

TEST_F(ShowCommand, BadInputIsRefused) {
  const ProcessResult unknown_gpu = show({"--gpu", "tpu-v9"});
  EXPECT_EQ(unknown_gpu.exit_code, 2);
  EXPECT_NE(unknown_gpu.err.find("unknown GPU 'tpu-v9'"), std::string::npos) << unknown_gpu.err;
  EXPECT_NE(unknown_gpu.err.find("allowed h200"), std::string::npos) << unknown_gpu.err;
  const ProcessResult bad_seq = show({"--seq", "-3"});
  EXPECT_EQ(bad_seq.exit_code, 2);
  EXPECT_NE(bad_seq.err.find("bad --seq '-3'"), std::string::npos) << bad_seq.err;
  const ProcessResult missing =
      run_swr_tune({"show", "--db", (scratch_.path() / "none.db").string()}, environment_);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no results database at"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() / "none.db"));
}

}  // namespace
}  // namespace swr::test
