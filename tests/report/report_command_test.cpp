// `swr-tune report` as a user runs it, on a real results database (no GPU): the PNGs gnuplot
// renders (PNG signature, not empty) and index.html showing them with the tables; the data and
// scripts without gnuplot on PATH; GEMM missing said in the page; `show --json` dumps as input;
// bad input is one line, exit code 2 and nothing written.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "report/gnuplot.hpp"
#include "run_swr_tune.hpp"
#include "tests/report/report_test_data.hpp"

namespace swr {
namespace {

using swr::test::ProcessResult;
using swr::test::run_swr_tune;
using swr::test::TemporaryDirectory;

const std::vector<std::string> kCharts = {"l2_misses_b8_h1_d128_f16_noncausal",
                                          "throughput_f16_noncausal", "roofline",
                                          "gemm_swizzle_f16"};

bool is_png(const std::filesystem::path& path) {
  const std::string bytes = testing::file_bytes(path);
  return bytes.size() > 1000 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

class ReportCommandTest : public ::testing::Test {
 protected:
  ReportCommandTest() : database_(directory_.path() / "results.db") {
    testing::add_attention_results(database_);
    testing::add_gemm_results(database_);
    testing::write_file(bench_, testing::bench_document().dump(1));
  }

  ProcessResult report(std::vector<std::string> extra = {},
                       const std::map<std::string, std::string>& environment = {}) {
    std::vector<std::string> arguments = {"report",           "--gpu",   "h200",          "--db",
                                          database_.string(), "--bench", bench_.string(), "--out",
                                          out_.string()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return run_swr_tune(arguments, environment);
  }

  std::string index() const { return testing::file_bytes(out_ / "index.html"); }

  TemporaryDirectory directory_;
  std::filesystem::path database_;
  std::filesystem::path bench_ = directory_.path() / "bench.json";
  std::filesystem::path out_ = directory_.path() / "report";
};

TEST_F(ReportCommandTest, RendersEveryChartAsPngAndShowsThemInIndex) {
  if (!report::find_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  const ProcessResult result = report();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("4 PNGs rendered"), std::string::npos) << result.out;
  const std::string html = index();
  ASSERT_FALSE(html.empty());
  for (const std::string& chart : kCharts) {
    EXPECT_TRUE(is_png(out_ / (chart + ".png"))) << chart;
    EXPECT_NE(html.find("<img src=\"" + chart + ".png\""), std::string::npos) << chart;
  }
  EXPECT_EQ(html.find("was not rendered"), std::string::npos);
  // The bench's ratios: swr/flash2 = 2 and swr/cudnn = 0.5 at every point.
  EXPECT_NE(html.find("<td>flash2</td><td class=\"n\">3</td><td class=\"n\">2.00x</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td>cudnn</td><td class=\"n\">3</td><td class=\"n\">0.50x</td>"),
            std::string::npos);
  EXPECT_NE(html.find("this PyTorch has no efficient backend"), std::string::npos);
  EXPECT_NE(html.find("<td>flash2 3.00e6</td>"), std::string::npos);  // a peer's ncu count
  EXPECT_NE(html.find("python3 bench/peer_grid.py --out x"), std::string::npos);
  EXPECT_NE(html.find("m128n64w4s2-cyclic-grid-head_major"), std::string::npos);
  // For a person to look at the PNGs: SWR_TEST_KEEP_REPORT=DIR keeps a copy of the report.
  if (const char* keep = std::getenv("SWR_TEST_KEEP_REPORT"); keep != nullptr && *keep != '\0') {
    std::filesystem::copy(out_, keep,
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::overwrite_existing);
  }
}

TEST_F(ReportCommandTest, WithoutGnuplotWritesDataAndScriptsAndSaysHowToRender) {
  TemporaryDirectory empty_path;
  std::filesystem::create_directories(out_);
  testing::write_file(out_ / "roofline.png", "left from an earlier report");
  const ProcessResult result = report({}, {{"PATH", empty_path.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("gnuplot not found on PATH"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("for f in *.gp; do gnuplot"), std::string::npos) << result.out;
  for (const std::string& chart : kCharts) {
    EXPECT_FALSE(std::filesystem::exists(out_ / (chart + ".png"))) << chart;
    EXPECT_GT(std::filesystem::file_size(out_ / (chart + ".gp")), 0u) << chart;
    EXPECT_GT(std::filesystem::file_size(out_ / (chart + ".dat")), 0u) << chart;
  }
  const std::string html = index();
  EXPECT_NE(html.find("gnuplot was not found on PATH"), std::string::npos);
  EXPECT_NE(html.find("gemm_swizzle_f16.gp"), std::string::npos);
}

TEST_F(ReportCommandTest, SaysWhenTheDatabaseHasNoGemmResults) {
  TemporaryDirectory other;
  const std::filesystem::path attention_only = other.path() / "attention.db";
  testing::add_attention_results(attention_only);
  TemporaryDirectory empty_path;
  const ProcessResult result =
      run_swr_tune({"report", "--db", attention_only.string(), "--out", out_.string()},
                   {{"PATH", empty_path.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(index().find("no GEMM results in this database"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(out_ / "gemm_swizzle_f16.gp"));
  // No bench: throughput from the database's tuned best.
  EXPECT_NE(index().find("No bench result was given"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(out_ / "throughput_f16_noncausal.gp"));
}

TEST_F(ReportCommandTest, DrawsFromShowJsonDumps) {
  const std::filesystem::path sweep =
      std::filesystem::path(SWR_SOURCE_DIR) / "bench/results/l2-sweep-h200";
  TemporaryDirectory empty_path;
  const ProcessResult result = run_swr_tune(
      {"report", "--gpu", "h200", "--from-json", (sweep / "measured_d64_s16384.json").string(),
       (sweep / "measured_d64_s32768.json").string(), "--out", out_.string()},
      {{"PATH", empty_path.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string data = testing::file_bytes(out_ / "l2_misses_b8_h1_d64_f16_noncausal.dat");
  EXPECT_NE(data.find("cyclic  m128n64w4s2-grid-head_major"), std::string::npos) << data;
  EXPECT_NE(data.find("sawtooth  m128n64w4s2-static-head_major"), std::string::npos) << data;
  EXPECT_NE(data.find("16384 2114260"), std::string::npos) << data;  // the tuner's count
}

TEST_F(ReportCommandTest, AddsShowJsonDumpsToACopyOfTheDatabase) {
  const std::filesystem::path dump = std::filesystem::path(SWR_SOURCE_DIR) /
                                     "bench/results/l2-sweep-h200/measured_d64_s16384.json";
  const std::string before = testing::file_bytes(database_);
  TemporaryDirectory empty_path;
  const ProcessResult result = run_swr_tune(
      {"report", "--db", database_.string(), "--from-json", dump.string(), "--out", out_.string()},
      {{"PATH", empty_path.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string html = index();
  EXPECT_NE(html.find("B8 H1 S16K D64 f16"), std::string::npos);   // from the dump
  EXPECT_NE(html.find("gemm_swizzle_f16.gp"), std::string::npos);  // from the database
  EXPECT_EQ(testing::file_bytes(database_), before);               // left as it was
}

TEST_F(ReportCommandTest, BadInputIsOneLineAndWritesNothing) {
  const std::filesystem::path not_bench = directory_.path() / "not-bench.json";
  testing::write_file(not_bench, "{\"points\": []}");
  const std::vector<std::vector<std::string>> bad = {
      {"report", "--gpu", "gb10", "--db", database_.string(), "--out", out_.string()},
      {"report", "--gpu", "h200", "--db", database_.string(), "--bench", not_bench.string(),
       "--out", out_.string()},
      {"report", "--db", database_.string(), "--from-json", not_bench.string(), "--out",
       out_.string()},
      {"report", "--from-json", bench_.string(), "--out", out_.string()},
      {"report", "--db", database_.string(), "--out", bench_.string()},
      {"report", "--db", (directory_.path() / "missing.db").string(), "--out", out_.string()},
      {"report", "--db", database_.string()},
  };
  for (const std::vector<std::string>& arguments : bad) {
    const ProcessResult result = run_swr_tune(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments.back() << ": " << result.err;
    EXPECT_EQ(test::lines_of(result.err).size(), 1u) << result.err;
    EXPECT_EQ(result.err.rfind("swr-tune: error: ", 0), 0u) << result.err;
    EXPECT_FALSE(std::filesystem::exists(out_)) << result.err;
  }
  EXPECT_NE(run_swr_tune(bad.front()).err.find("allowed h200"), std::string::npos);
}

// --from-json copies --db into a temporary directory first: a run that fails on the dump must
// remove that copy too (it once stayed behind in the temporary directory).
TEST_F(ReportCommandTest, AFailedFromJsonLeavesNoTemporaryCopy) {
  const std::filesystem::path temporary = directory_.path() / "tmp";
  std::filesystem::create_directories(temporary);
  const std::filesystem::path not_show_dump = directory_.path() / "not-a-dump.json";
  testing::write_file(not_show_dump, "{\"points\": []}");
  const ProcessResult result = run_swr_tune({"report", "--db", database_.string(), "--from-json",
                                             not_show_dump.string(), "--out", out_.string()},
                                            {{"TMPDIR", temporary.string()}});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_TRUE(std::filesystem::is_empty(temporary)) << "left in " << temporary.string();
}

}  // namespace
}  // namespace swr
