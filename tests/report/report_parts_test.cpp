// The report's parts on their own: the series the charts draw (twins and the cold-miss line, the
// heatmap's best strides, the roofline's points), for the attention backward too, the bench
// ratios, and the text escaping of gnuplot and HTML.
#include <gtest/gtest.h>

#include <cmath>

#include "model/closed_form_traffic.hpp"
#include "report/bench_results.hpp"
#include "report/gemm_heatmap.hpp"
#include "report/gnuplot.hpp"
#include "report/html_report.hpp"
#include "report/l2_miss_chart.hpp"
#include "report/roofline_chart.hpp"
#include "report/throughput_chart.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/report/report_test_data.hpp"

namespace swr::report {
namespace {

class ReportPartsTest : public ::testing::Test {
 protected:
  ReportPartsTest() : path_(directory_.path() / "results.db") {
    testing::add_attention_results(path_);
    testing::add_gemm_results(path_);
  }
  GpuResults load() {
    const db::ResultsDatabase database(path_, db::OpenMode::read_only);
    return load_gpu_results(database, "h200");
  }

  testing::TemporaryDirectory directory_;
  std::filesystem::path path_;
};

TEST_F(ReportPartsTest, L2PanelDrawsBothTwinsInBothOrdersWithTheColdMissLine) {
  const std::vector<L2MissPanel> panels = l2_miss_panels(load(), AttentionPass::forward);
  ASSERT_EQ(panels.size(), 1u);
  const L2MissPanel& panel = panels.front();
  EXPECT_EQ(panel.shape, "B8 H1 D128 f16 non-causal");
  ASSERT_EQ(panel.series.size(), 4u);  // two twin pairs, cyclic and sawtooth each
  EXPECT_TRUE(panel.twins);
  for (const L2MissSeries& series : panel.series) EXPECT_EQ(series.points.size(), 3u);
  EXPECT_EQ(panel.series[0].order, KvOrder::cyclic);
  EXPECT_EQ(panel.series[1].order, KvOrder::sawtooth);
  EXPECT_EQ(panel.series[0].twin_index, panel.series[1].twin_index);
  // Twins first whose variant was fastest most often: the grid pair (5% faster than static).
  EXPECT_EQ(panel.series[0].label, "cyclic  m128n64w4s2-grid-head_major");
  ASSERT_EQ(panel.cold_misses.size(), 3u);
  for (const SeriesPoint& point : panel.cold_misses) {
    // Q, K, V, O once: 4 * B * S * D * 2 bytes / 32-byte sectors.
    EXPECT_DOUBLE_EQ(point.y, 4.0 * 8 * point.x * 128 * 2 / 32);
  }
  // The L2 model's onset of non-compulsory misses (model/closed_form_traffic.hpp) for this shape.
  ASSERT_TRUE(panel.onset_seq.has_value());
  EXPECT_GT(*panel.onset_seq, 0);
}

TEST_F(ReportPartsTest, HeatmapCellsHoldTheBestVariantAndMarkEachSizesBestStride) {
  const std::vector<GemmHeatmap> heatmaps = gemm_heatmaps(load());
  ASSERT_EQ(heatmaps.size(), 1u);
  const GemmHeatmap& heatmap = heatmaps.front();
  EXPECT_EQ(heatmap.dtype, "f16");
  EXPECT_EQ(heatmap.strides, (std::vector<long long>{0, 512, 1024, 2048}));
  ASSERT_EQ(heatmap.sizes.size(), 3u);
  EXPECT_EQ(heatmap.sizes[0].label(), "1024³");
  // The fixture's best stride is size / 2: 512, 1024, 2048.
  EXPECT_EQ(heatmap.best_column, (std::vector<std::optional<std::size_t>>{1, 2, 3}));
  EXPECT_NEAR(*heatmap.tflops[2][3], 300.0, 1e-9);
  ASSERT_TRUE(heatmap.cublas_tflops[2].has_value());
  EXPECT_NEAR(*heatmap.cublas_tflops[2], 400.0, 1e-9);
}

TEST_F(ReportPartsTest, RooflinePlacesEachBestVariantUnderTheProfilesRoofs) {
  const Roofline roofline = roofline_of(load());
  ASSERT_TRUE(roofline.ridge_intensity().has_value());
  EXPECT_NEAR(*roofline.ridge_intensity(), 989.0 / 4.8, 1e-6);
  EXPECT_EQ(roofline.points.size(), 3u);  // the attention shapes; GEMM rows have no DRAM counters
  EXPECT_EQ(roofline.best_without_counters, 3);
  EXPECT_EQ(roofline.groups, std::vector<std::string>{"attention D128"});
}

TEST_F(ReportPartsTest, ThroughputFromTheDatabaseIsSwrOnly) {
  const std::vector<ThroughputPanel> panels = throughput_panels(load(), AttentionPass::forward);
  ASSERT_EQ(panels.size(), 1u);
  ASSERT_EQ(panels[0].plots.size(), 1u);
  ASSERT_EQ(panels[0].plots[0].series.size(), 1u);
  EXPECT_EQ(panels[0].plots[0].series[0].label, "swr tuned best, B8 H1");
}

TEST_F(ReportPartsTest, BackwardL2PanelDrawsTheQWalkTwinsWithTheModelsColdMisses) {
  testing::add_attention_backward_results(path_);
  const GpuResults results = load();
  const std::vector<L2MissPanel> panels = l2_miss_panels(results, AttentionPass::backward);
  ASSERT_EQ(panels.size(), 1u);  // the shape without counters has no panel
  const L2MissPanel& panel = panels.front();
  EXPECT_EQ(panel.pass, AttentionPass::backward);
  EXPECT_EQ(panel.stem, "l2_misses_backward_b2_h4_d64_bf16_causal");
  EXPECT_EQ(panel.shape, "B2 H4 D64 bf16 causal");
  ASSERT_EQ(panel.series.size(), 4u);
  EXPECT_TRUE(panel.twins);
  // The atomic pair first: its variant is the fastest at every S. Twins keep the dQ knob.
  EXPECT_EQ(panel.series[0].label, "cyclic  bwd-m64n128w8s2-grid-head_major");
  EXPECT_EQ(panel.series[1].label, "sawtooth  bwd-m64n128w8s2-grid-head_major");
  EXPECT_EQ(panel.series[2].label, "cyclic  bwd-m64n128w8s2-grid-head_major-det");
  EXPECT_EQ(panel.series[3].label, "sawtooth  bwd-m64n128w8s2-grid-head_major-det");
  ASSERT_EQ(panel.series[1].points.size(), 3u);
  EXPECT_DOUBLE_EQ(panel.series[1].points[2].x, 16384);
  EXPECT_DOUBLE_EQ(panel.series[1].points[2].y, testing::backward_cold_misses(16384) * 1.5);
  // The cold misses are the L2 model's replay's compulsory sectors, which the fixture counts.
  ASSERT_EQ(panel.cold_misses.size(), 3u);
  for (const SeriesPoint& point : panel.cold_misses) {
    EXPECT_DOUBLE_EQ(point.y, testing::backward_cold_misses(static_cast<int>(point.x))) << point.x;
  }
  EXPECT_FALSE(panel.onset_seq.has_value());  // the forward's K/V rule does not apply
  // The forward's panel is the forward's alone.
  const std::vector<L2MissPanel> forward = l2_miss_panels(results, AttentionPass::forward);
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(forward[0].stem, "l2_misses_b8_h1_d128_f16_noncausal");
}

TEST_F(ReportPartsTest, BackwardThroughputIsTheBestVariantsRateByTheBackwardsCount) {
  testing::add_attention_backward_results(path_);
  const std::vector<ThroughputPanel> panels = throughput_panels(load(), AttentionPass::backward);
  ASSERT_EQ(panels.size(), 2u);  // bf16 non-causal, bf16 causal
  EXPECT_EQ(panels[0].stem, "throughput_backward_bf16_noncausal");
  const ThroughputPanel& causal = panels[1];
  EXPECT_EQ(causal.stem, "throughput_backward_bf16_causal");
  EXPECT_EQ(causal.pass, AttentionPass::backward);
  ASSERT_EQ(causal.plots.size(), 1u);
  EXPECT_EQ(causal.plots[0].head_dim, 64);
  ASSERT_EQ(causal.plots[0].series.size(), 1u);
  EXPECT_EQ(causal.plots[0].series[0].label, "swr tuned best, B2 H4");
  const std::vector<SeriesPoint>& points = causal.plots[0].series[0].points;
  ASSERT_EQ(points.size(), 3u);
  for (const SeriesPoint& point : points) {
    // 2.5 x 4·B·H·S²·D / 2 over the best (sawtooth, atomic) median 0.96 (S/4096)² ms.
    const double flops = 2.5 * 4 * 2 * 4 * point.x * point.x * 64 / 2;
    const double ms = 0.96 * (point.x / 4096) * (point.x / 4096);
    EXPECT_NEAR(point.y, flops / (ms * 1e9), 1e-9) << point.x;
  }
  // The forward's panels leave the backward out.
  const std::vector<ThroughputPanel> forward = throughput_panels(load(), AttentionPass::forward);
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(forward[0].stem, "throughput_f16_noncausal");
}

TEST_F(ReportPartsTest, BackwardProblemsAreToldApartFromTheForwardInTheSharedTables) {
  testing::add_attention_backward_results(path_);
  const GpuResults results = load();
  const std::vector<const ProblemResults*> backward = results.of_family("attention-backward");
  ASSERT_EQ(backward.size(), 4u);
  EXPECT_EQ(describe_problem(backward[0]->problem), "B2 H4 S4096 D64 bf16 causal backward");
  EXPECT_EQ(describe_problem(results.of_family("attention")[0]->problem), "B8 H1 S16K D128 f16");
  // The roofline keeps the passes in groups of their own.
  const Roofline roofline = roofline_of(results);
  EXPECT_EQ(roofline.groups,
            (std::vector<std::string>{"attention D128", "attention backward D64 causal"}));
  EXPECT_EQ(roofline.points.size(), 3u + 3u);
  EXPECT_EQ(roofline.points[3].label, "B2 H4 S4096 D64 bf16 causal backward");
  EXPECT_EQ(roofline.best_without_counters, 3 + 1);  // GEMM and the backward without counters
}

TEST(BenchResultsTest, RatiosAreSwrThroughputOverThePeersWithGeometricMeans) {
  testing::TemporaryDirectory directory;
  nlohmann::json document = testing::bench_document();
  // One point 8x faster than flash2 instead of 2x: geometric mean (2 * 2 * 8)^(1/3) = 3.17.
  document["points"][2]["candidates"]["flash2"]["median_ms"] = 8 * 4.0;
  testing::write_file(directory.path() / "bench.json", document.dump());
  const BenchResults bench = read_bench_results(directory.path() / "bench.json");
  EXPECT_EQ(bench.peers(), (std::vector<std::string>{"flash2", "cudnn", "efficient"}));
  const std::vector<RegimeRatio> ratios = bench.regime_ratios();
  ASSERT_EQ(ratios.size(), 2u);  // efficient never ran
  EXPECT_EQ(ratios[0].peer, "flash2");
  EXPECT_NEAR(ratios[0].geometric_mean, std::cbrt(32.0), 1e-9);
  EXPECT_EQ(ratios[0].swr_faster, 3);
  EXPECT_NEAR(ratios[1].geometric_mean, 0.5, 1e-9);
  EXPECT_EQ(ratios[1].swr_faster, 0);
  EXPECT_EQ(bench.regime_title("long"), "Sawtooth long sequences");
  EXPECT_FALSE(bench.points[0].ratio_to("efficient").has_value());
}

TEST(BenchResultsTest, RefusesFilesThatAreNotPeerGridResults) {
  testing::TemporaryDirectory directory;
  testing::write_file(directory.path() / "other.json", R"({"schema": "something else"})");
  testing::write_file(directory.path() / "broken.json", "{");
  EXPECT_THROW(read_bench_results(directory.path() / "other.json"), UsageError);
  EXPECT_THROW(read_bench_results(directory.path() / "broken.json"), UsageError);
  EXPECT_THROW(read_bench_results(directory.path() / "missing.json"), UsageError);
}

TEST(ReportTextTest, GnuplotAndHtmlTextIsEscaped) {
  EXPECT_EQ(gnuplot_string("a \"b\" \\ c\nd"), "\"a \\\"b\\\" \\\\ c\\nd\"");
  EXPECT_EQ(html_escape("<a href=\"x\">&</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
  EXPECT_EQ(data_number(std::nullopt), "NaN");
  EXPECT_EQ(data_number(262144), "262144");
  EXPECT_EQ(short_count(16384), "16K");
  EXPECT_EQ(short_count(8192), "8192");
  EXPECT_EQ(short_count(1 << 20), "1M");
}

}  // namespace
}  // namespace swr::report
