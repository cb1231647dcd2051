// `swr-tune report` as a user runs it, on a real results database (no GPU): the PNGs gnuplot
// renders (PNG signature, not empty) and index.html showing them with the tables; the data and
// scripts without gnuplot on PATH; GEMM missing said in the page; the attention backward's section
// and charts, and none without backward results; `show --json` dumps as input; bad input is one
// line, exit code 2 and nothing written.
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

  // For a person to look at the PNGs: SWR_TEST_KEEP_REPORT=DIR keeps a copy of the report.
  void keep_report_if_asked() const {
    if (const char* keep = std::getenv("SWR_TEST_KEEP_REPORT"); keep != nullptr && *keep != '\0') {
      std::filesystem::copy(out_, keep,
                            std::filesystem::copy_options::recursive |
                                std::filesystem::copy_options::overwrite_existing);
    }
  }

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
  keep_report_if_asked();
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

const std::vector<std::string> kBackwardCharts = {"l2_misses_backward_b2_h4_d64_bf16_causal",
                                                  "throughput_backward_bf16_causal",
                                                  "throughput_backward_bf16_noncausal"};

// The backward section's rows of the fixture (report_test_data.hpp): at S16K the sawtooth variant
// with atomic dQ, 0.96 x 16 ms, 2.5 x 4·2·4·16384²·64 / 2 FLOPs = 6.872e11 -> 44.7 TFLOP/s, 1.5x
// the 3178496 cold misses; at B1 H8 S8192 D128 the deterministic variant, 9 ms for 6.872e11 FLOPs
// -> 76.4 TFLOP/s, no counters, one of three variants failed.
const char* const kBackwardBestRow =
    "<tr><td>B2 H4 S16K D64 bf16 causal</td><td>bwd-m64n128w8s2-sawtooth-grid-head_major</td>"
    "<td class=\"n\">15.360</td><td class=\"n\">44.7</td><td class=\"n\">4.77e6</td>"
    "<td>no</td><td class=\"n\">4</td><td class=\"n\">0</td></tr>";
const char* const kDeterministicBestRow =
    "<tr><td>B1 H8 S8192 D128 bf16</td><td>bwd-m64n128w8s2-cyclic-grid-head_major-det</td>"
    "<td class=\"n\">9.000</td><td class=\"n\">76.4</td><td class=\"n\">-</td>"
    "<td>yes</td><td class=\"n\">3</td><td class=\"n\">1</td></tr>";

TEST_F(ReportCommandTest, DrawsTheBackwardInASectionOfItsOwn) {
  testing::add_attention_backward_results(database_);
  TemporaryDirectory empty_path;
  const ProcessResult result = report({}, {{"PATH", empty_path.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const std::string& chart : kBackwardCharts) {
    EXPECT_NE(result.out.find(chart + ".png"), std::string::npos) << result.out;
    EXPECT_GT(std::filesystem::file_size(out_ / (chart + ".gp")), 0u) << chart;
  }
  const std::string html = index();
  const std::size_t section = html.find("<h2>Attention backward: best variant per shape</h2>");
  ASSERT_NE(section, std::string::npos);
  EXPECT_GT(section, html.find("<h2>L2 misses: cyclic vs sawtooth K/V order</h2>"));
  EXPECT_NE(html.find(kBackwardBestRow, section), std::string::npos) << html.substr(section, 3000);
  EXPECT_NE(html.find(kDeterministicBestRow, section), std::string::npos);
  EXPECT_NE(html.find("the backward's count: 2.5x the forward's 4·B·H·S²·D", section),
            std::string::npos);
  EXPECT_NE(html.find("<h2>L2 misses of the backward: cyclic vs sawtooth Q walk</h2>", section),
            std::string::npos);
  EXPECT_NE(html.find("throughput_backward_bf16_causal.dat", section), std::string::npos);
  // The tables of every problem tell the passes apart.
  EXPECT_NE(html.find("<td>B2 H4 S16K D64 bf16 causal backward</td>"), std::string::npos);

  // The L2 chart's data: each Q-walk twin's misses and the L2 model's cold misses.
  const std::string l2 = testing::file_bytes(out_ / (kBackwardCharts[0] + ".dat"));
  EXPECT_NE(l2.find("index 1: sawtooth  bwd-m64n128w8s2-grid-head_major"), std::string::npos) << l2;
  EXPECT_NE(l2.find("16384 4767744\n"), std::string::npos) << l2;  // sawtooth, atomic dQ
  EXPECT_NE(l2.find("16384 9535488\n"), std::string::npos) << l2;  // cyclic, atomic dQ
  EXPECT_NE(l2.find("index 4: cold misses"), std::string::npos) << l2;
  EXPECT_NE(l2.find("16384 3178496\n"), std::string::npos) << l2;
  const std::string l2_script = testing::file_bytes(out_ / (kBackwardCharts[0] + ".gp"));
  EXPECT_NE(l2_script.find("Attention backward: L2 misses vs sequence length, cyclic vs sawtooth "
                           "Q walk"),
            std::string::npos)
      << l2_script;
  // The throughput chart's data: the best variant's TFLOP/s per S.
  const std::string causal = testing::file_bytes(out_ / (kBackwardCharts[1] + ".dat"));
  EXPECT_NE(causal.find("16384 44.739"), std::string::npos) << causal;
  const std::string noncausal = testing::file_bytes(out_ / (kBackwardCharts[2] + ".dat"));
  EXPECT_NE(noncausal.find("8192 76.35"), std::string::npos) << noncausal;
  EXPECT_NE(testing::file_bytes(out_ / (kBackwardCharts[1] + ".gp"))
                .find("Attention backward throughput vs sequence length"),
            std::string::npos);
}

TEST_F(ReportCommandTest, RendersTheBackwardChartsAsPng) {
  if (!report::find_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  testing::add_attention_backward_results(database_);
  const ProcessResult result = report();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("7 PNGs rendered"), std::string::npos) << result.out;
  const std::string html = index();
  for (const std::string& chart : kBackwardCharts) {
    EXPECT_TRUE(is_png(out_ / (chart + ".png"))) << chart;
    EXPECT_NE(html.find("<img src=\"" + chart + ".png\""), std::string::npos) << chart;
  }
  EXPECT_EQ(html.find("was not rendered"), std::string::npos);
  keep_report_if_asked();
}

TEST_F(ReportCommandTest, NoBackwardResultsMeanNoBackwardSection) {
  TemporaryDirectory empty_path;
  const ProcessResult result = report({}, {{"PATH", empty_path.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(result.err.empty()) << result.err;
  const std::string html = index();
  ASSERT_NE(html.find("<h2>Tuned shapes in the database</h2>"), std::string::npos);
  EXPECT_EQ(html.find("backward"), std::string::npos);
  for (const auto& entry : std::filesystem::directory_iterator(out_)) {
    EXPECT_EQ(entry.path().filename().string().find("backward"), std::string::npos) << entry.path();
  }
}

// `show --json` of the backward, both forms (the best per shape; every variant of one shape), read
// back by --from-json: the same section as from the database.
TEST_F(ReportCommandTest, DrawsTheBackwardFromShowJsonDumps) {
  TemporaryDirectory other;
  const std::filesystem::path backward_only = other.path() / "backward.db";
  testing::add_attention_backward_results(backward_only);
  const std::filesystem::path best = other.path() / "best.json";
  const std::filesystem::path variants = other.path() / "variants.json";
  const ProcessResult best_dump = run_swr_tune(
      {"show", "--db", backward_only.string(), "--family", "attention-backward", "--json"});
  ASSERT_EQ(best_dump.exit_code, 0) << best_dump.err;
  testing::write_file(best, best_dump.out);
  const ProcessResult variants_dump =
      run_swr_tune({"show", "--db", backward_only.string(), "--family", "attention-backward",
                    "--gpu", "h200", "--seq", "16384", "--batch", "2", "--heads", "4", "--head-dim",
                    "64", "--dtype", "bf16", "--causal", "--json"});
  ASSERT_EQ(variants_dump.exit_code, 0) << variants_dump.err;
  testing::write_file(variants, variants_dump.out);

  TemporaryDirectory empty_path;
  const ProcessResult result =
      run_swr_tune({"report", "--gpu", "h200", "--from-json", best.string(), variants.string(),
                    "--out", out_.string()},
                   {{"PATH", empty_path.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string html = index();
  EXPECT_NE(html.find(kBackwardBestRow), std::string::npos) << html;
  // The best-per-shape form holds the best variant only: one measured, no failure.
  EXPECT_NE(html.find("<tr><td>B1 H8 S8192 D128 bf16</td><td>"
                      "bwd-m64n128w8s2-cyclic-grid-head_major-det</td><td class=\"n\">9.000</td>"),
            std::string::npos);
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
