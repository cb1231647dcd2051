// The time model's arithmetic on hand-made calibrations, where every figure can be worked out by
// hand: the overlap and its inverse, rates per SM, latency hiding, makespans, the step-time rules
// and their scaling to another GPU, the fit of the overlap and of the mma_sync share, and the
// ranking figures of the transfer check.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "model/time_model.hpp"
#include "model/transfer_check.hpp"
#include "model/work_makespan.hpp"
#include "model_test_support.hpp"
#include "support/files.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

using testing::attention_problem;
using testing::builtin;

TEST(TimeModel, OverlapAndItsInverse) {
  EXPECT_DOUBLE_EQ(overlapped_seconds(10, 4, 0.25), 11);  // compute bound: C + 0.25 M
  EXPECT_DOUBLE_EQ(compute_from_measured(11, 4, 0.25), 10);
  EXPECT_DOUBLE_EQ(overlapped_seconds(2, 10, 0.5), 11);  // memory bound: M + 0.5 C
  EXPECT_DOUBLE_EQ(compute_from_measured(11, 10, 0.5), 2);
  // Measured faster than its DRAM time: compute cannot be told apart, the time stands.
  EXPECT_DOUBLE_EQ(compute_from_measured(5, 10, 0.5), 5);
}

TEST(TimeModel, RatesPerSmAndLatencyHiding) {
  const GpuProfile h200 = builtin("h200");
  const GpuProfile gb10 = builtin("gb10");
  EXPECT_DOUBLE_EQ(path_rate_per_sm(h200, InstructionPath::wgmma, 0.6), 989e12 / 132);
  EXPECT_DOUBLE_EQ(path_rate_per_sm(h200, InstructionPath::mma_sync, 0.6), 989e12 / 132 * 0.6);
  // mma.sync is the full-rate instruction of a GPU without wgmma.
  EXPECT_DOUBLE_EQ(path_rate_per_sm(gb10, InstructionPath::mma_sync, 0.6), 125e12 / 48);
  EXPECT_DOUBLE_EQ(latency_hiding(4), std::sqrt(0.5));
  EXPECT_DOUBLE_EQ(latency_hiding(8), 1.0);
  EXPECT_DOUBLE_EQ(latency_hiding(24), 1.0);
}

AttentionConfig key(const char* text) {
  return AttentionConfig::from_key(text).value();
}

TEST(WorkMakespan, AttentionTilesOverSlots) {
  // S = 1024, 128 x 64 tiles: 8 Q tiles of 16 K/V steps; 4 slots: two waves.
  const AttentionProblem plain = attention_problem(1, 1, 1024, 64, false);
  const WorkMakespan grid = attention_makespan(plain, key("m128n64w4s2-cyclic-grid-head_major"), 4);
  EXPECT_EQ(grid.tiles, 8);
  EXPECT_DOUBLE_EQ(grid.total_steps, 128);
  EXPECT_DOUBLE_EQ(grid.busiest_slot_steps, 32);
  // Causal: Q tile i walks 2 (i + 1) steps, longest first (16, 14, ..., 2). grid hands the next
  // tile to the slot that frees first: 16, 14, 12, 10, then 8, 6, 4, 2 fill every slot to 18.
  const AttentionProblem causal = attention_problem(1, 1, 1024, 64, true);
  const WorkMakespan greedy =
      attention_makespan(causal, key("m128n64w4s2-cyclic-grid-head_major"), 4);
  EXPECT_DOUBLE_EQ(greedy.total_steps, 72);
  EXPECT_DOUBLE_EQ(greedy.busiest_slot_steps, 18);
  // static keeps its stride: slot 0 takes tiles 0 and 4, 16 + 8 steps.
  EXPECT_DOUBLE_EQ(
      attention_makespan(causal, key("m128n64w4s2-cyclic-static-head_major"), 4).busiest_slot_steps,
      24);
  EXPECT_THROW(attention_makespan(plain, key("m128n64w4s2-cyclic-grid-head_major"), 0), UsageError);
}

TEST(WorkMakespan, GemmWavesAndStreamK) {
  // 1024^3 in 128 x 128 x 32 tiles: 64 tiles of 32 k blocks over 10 slots.
  const GemmProblem problem{1024, 1024, 1024, DataType::f16};
  GemmConfig config = GemmConfig::from_key("m128n128k32w2x4s3-static-swz0").value();
  const WorkMakespan waves = gemm_makespan(problem, config, 10);
  EXPECT_EQ(waves.tiles, 64);
  EXPECT_DOUBLE_EQ(waves.busiest_slot_steps, 7 * 32);
  // Stream-K: 6 whole waves, then the last 4 tiles' 128 k blocks split over 10 slots: 13 each.
  config.persistence = GemmPersistence::stream_k;
  EXPECT_DOUBLE_EQ(gemm_makespan(problem, config, 10).busiest_slot_steps, 6 * 32 + 13);
}

// One measured point: m128n64w4s2 cyclic grid, 2 CTAs per SM (8 warps), 10 us per step.
TimeCalibration one_point_calibration() {
  TimeCalibration calibration;
  calibration.gpu = "h200";
  calibration.overlap = 0.5;
  calibration.mma_sync_share = 0.5;
  const AttentionProblem shape = attention_problem(1, 1, 1024, 64, false);
  calibration.shapes[shape.key()] = shape.to_json();
  StepPoint point;
  point.family = "attention";
  point.shape = shape.key();
  point.config = "m128n64w4s2-cyclic-grid-head_major";
  point.ctas_per_sm = 2;
  point.warps_per_sm = 8;
  point.timed_runs = 20;
  point.step_seconds = 10e-6;
  point.fits_l2 = true;
  calibration.points.push_back(point);
  return calibration;
}

TEST(TimeModel, ScalesAMeasuredStepToAnotherGpu) {
  const TimeModel model(one_point_calibration());
  const GpuProfile gb10 = builtin("gb10");
  const AttentionProblem problem = attention_problem(1, 1, 1024, 64, false);
  // On the GB10 with 1 CTA per SM (4 warps): per SM the step took 10 us / 2 CTAs at the H200's
  // mma_sync rate; the GB10's rate per SM is another, and 4 warps hide latency sqrt(1/2) as well.
  const double rate_ratio = (989e12 / 132 * 0.5) / (125e12 / 48);
  const double step = 10e-6 / 2 * rate_ratio / std::sqrt(0.5);
  const TimeEstimate alone =
      model.attention(problem, key("m128n64w4s2-cyclic-grid-head_major"), gb10, 1, 0);
  EXPECT_TRUE(alone.known);
  EXPECT_EQ(alone.rule, "measured");
  EXPECT_NEAR(alone.compute_seconds, 16 * step, 1e-15);  // 8 tiles of 16 steps on 48 slots
  EXPECT_DOUBLE_EQ(alone.seconds, alone.compute_seconds);
  EXPECT_EQ(alone.bound, "compute");
  // DRAM: 273 GB at 273 GB/s is 1 s, far more than compute: memory bound, half the compute added.
  const TimeEstimate memory =
      model.attention(problem, key("m128n64w4s2-cyclic-grid-head_major"), gb10, 1, 273e9);
  EXPECT_DOUBLE_EQ(memory.memory_seconds, 1.0);
  EXPECT_NEAR(memory.seconds, 1.0 + 0.5 * 16 * step, 1e-12);
  EXPECT_EQ(memory.bound, "memory");
}

TEST(TimeModel, RulesForVariantsNeverMeasured) {
  const TimeModel model(one_point_calibration());
  const GpuProfile h200 = builtin("h200");
  const AttentionProblem problem = attention_problem(1, 1, 1024, 64, false);
  // The sawtooth twin shares the compute: the same step.
  const TimeEstimate twin =
      model.attention(problem, key("m128n64w4s2-sawtooth-grid-head_major"), h200, 2, 0);
  EXPECT_EQ(twin.rule, "twin");
  EXPECT_NEAR(twin.compute_seconds, 16 * 10e-6, 1e-15);  // 8 tiles on 264 slots: 16 steps
  // Another pipeline depth of the same tile.
  EXPECT_EQ(model.attention(problem, key("m128n64w4s3-cyclic-grid-head_major"), h200, 2, 0).rule,
            "same tile");
  // Another block_n on the same path and block_m: the step scaled by the K/V rows it computes.
  const TimeEstimate wider =
      model.attention(problem, key("m128n128w8s2-cyclic-grid-head_major"), h200, 1, 0);
  EXPECT_EQ(wider.rule, "same path");
  // 8 steps per tile; per SM 5 us x 2 (block_n), one CTA of 8 warps.
  EXPECT_NEAR(wider.compute_seconds, 8 * 10e-6, 1e-15);
  // The other mask and head dim fall back to the nearest class (the head dim scales the step).
  const TimeEstimate causal =
      model.attention(attention_problem(1, 1, 1024, 64, true),
                      key("m128n64w4s2-cyclic-grid-head_major"), h200, 2, 0);
  EXPECT_EQ(causal.rule, "measured");
  const TimeEstimate dims = model.attention(attention_problem(1, 1, 1024, 128, false),
                                            key("m128n64w4s2-cyclic-grid-head_major"), h200, 2, 0);
  EXPECT_NEAR(dims.compute_seconds, 2 * 16 * 10e-6, 1e-15);
  // No wgmma point at all: nothing to scale, the time is the DRAM time alone.
  const TimeEstimate none =
      model.attention(problem, key("wgmma-m128n128s2-cyclic-grid-head_major"), h200, 1, 4.8e9);
  EXPECT_FALSE(none.known);
  EXPECT_EQ(none.rule, "none");
  EXPECT_DOUBLE_EQ(none.seconds, 1e-3);
}

// A kernel form the calibration never measured (here the overlapped ping-pong wgmma consumers, with
// only the plain form's tile measured) still gets a time, borrowed from the same tile, and says
// that the time is another form's; the measured form's variants and their twins say theirs is.
TEST(TimeModel, SaysWhenAStepIsBorrowedFromAnotherKernelForm) {
  TimeCalibration calibration = one_point_calibration();
  StepPoint plain = calibration.points.front();
  plain.config = "wgmma-m192n128s2-cyclic-dynamic-head_major";
  plain.ctas_per_sm = 1;
  plain.warps_per_sm = 16;
  calibration.points.push_back(plain);
  const TimeModel model(calibration);
  const GpuProfile h200 = builtin("h200");
  const AttentionProblem problem = attention_problem(1, 1, 1024, 64, false);
  const auto estimate = [&](const char* config) {
    return model.attention(problem, key(config), h200, 1, 0);
  };
  EXPECT_EQ(estimate("wgmma-m192n128s2-cyclic-dynamic-head_major").rule, "measured");
  EXPECT_TRUE(estimate("wgmma-m192n128s2-cyclic-dynamic-head_major").form_calibrated);
  EXPECT_TRUE(estimate("wgmma-m192n128s2-sawtooth-dynamic-groups2").form_calibrated);  // a twin
  EXPECT_TRUE(estimate("wgmma-m192n128s3-cyclic-grid-head_major").form_calibrated);
  const TimeEstimate overlapped = estimate("wgmma-m192n128s2-ov-pp-cyclic-dynamic-head_major");
  EXPECT_EQ(overlapped.rule, "same tile");
  EXPECT_FALSE(overlapped.form_calibrated);
  EXPECT_FALSE(estimate("wgmma-m192n128s2-psm-cyclic-dynamic-head_major").form_calibrated);
  EXPECT_TRUE(same_kernel_form(key("wgmma-m192n128s2-ov-pp-cyclic-grid-head_major"),
                               key("wgmma-m192n176s3-ov-pp-sawtooth-dynamic-groups2")));
  // Two consumer warpgroups take turns otherwise than three.
  EXPECT_FALSE(same_kernel_form(key("wgmma-m192n128s2-ov-pp-cyclic-grid-head_major"),
                                key("wgmma-m128n128s2-ov-pp-cyclic-grid-head_major")));
  EXPECT_FALSE(same_kernel_form(key("wgmma-m192n128s2-ov-pp-cyclic-grid-head_major"),
                                key("wgmma-m192n128s2-ov-pp-psm-cyclic-grid-head_major")));
  EXPECT_FALSE(same_kernel_form(key("m128n64w4s2-cyclic-grid-head_major"),
                                key("wgmma-m192n128s2-cyclic-grid-head_major")));
}

// Head dims never calibrated take the nearest calibrated head dim's step (|log2| of the ratio),
// scaled by D over it, and say so; grouped K/V heads change no step (the makespan counts query
// heads' tiles) and only the DRAM bytes the simulator predicts.
TEST(TimeModel, UncalibratedHeadDimsTakeTheNearestAndGqaKeepsTheStep) {
  TimeCalibration calibration = one_point_calibration();
  // A second point at D = 128, 20 us per step (twice D=64's: the step is linear in D).
  const AttentionProblem wide = attention_problem(1, 1, 1024, 128, false);
  calibration.shapes[wide.key()] = wide.to_json();
  StepPoint point = calibration.points.front();
  point.shape = wide.key();
  point.step_seconds = 20e-6 * 1.01;  // tells the two points apart
  calibration.points.push_back(point);
  const TimeModel model(calibration);
  const GpuProfile h200 = builtin("h200");
  const AttentionConfig config = key("m128n64w4s2-cyclic-grid-head_major");
  const struct {
    int head_dim;
    int nearest;
    double step;  // per CTA step, on 2 CTAs per SM as calibrated
  } cases[] = {{32, 64, 10e-6 * 32 / 64},     {80, 64, 10e-6 * 80 / 64},
               {96, 128, 20.2e-6 * 96 / 128}, {160, 128, 20.2e-6 * 160 / 128},
               {256, 128, 20.2e-6 * 2},       {128, 128, 20.2e-6}};
  for (const auto& c : cases) {
    const TimeEstimate estimate =
        model.attention(attention_problem(1, 1, 1024, c.head_dim, false), config, h200, 2, 0);
    EXPECT_EQ(estimate.rule,
              c.head_dim == c.nearest ? "measured" : "measured D" + std::to_string(c.nearest))
        << c.head_dim;
    EXPECT_NE(estimate.calibrated_on.find("_d" + std::to_string(c.nearest) + "_"),
              std::string::npos)
        << estimate.calibrated_on;
    EXPECT_NEAR(estimate.compute_seconds, 16 * c.step, 1e-15) << c.head_dim;  // 8 tiles, 264 slots
  }
  // GQA: 8 query heads on 2 K/V heads computes what 8 heads do; the DRAM bytes differ.
  AttentionProblem mha = attention_problem(1, 8, 1024, 64, false);
  AttentionProblem gqa = mha;
  gqa.kv_heads = 2;
  const TimeEstimate a = model.attention(mha, config, h200, 2, 4.8e9);
  const TimeEstimate b = model.attention(gqa, config, h200, 2, 1.2e9);
  EXPECT_EQ(b.rule, "measured");
  EXPECT_DOUBLE_EQ(a.compute_seconds, b.compute_seconds);
  EXPECT_DOUBLE_EQ(b.memory_seconds, 0.25e-3);
}

TEST(TimeModel, CalibrationJsonRoundTrips) {
  const TimeCalibration calibration = one_point_calibration();
  EXPECT_EQ(TimeCalibration::from_json(calibration.to_json()).to_json(), calibration.to_json());
}

MeasuredAttention measured(const char* config, double seconds, double dram_bytes) {
  MeasuredAttention variant;
  variant.problem = attention_problem(1, 1, 1024, 64, false);
  variant.config = key(config);
  variant.gpu = "h200";
  variant.ctas_per_sm = 2;
  variant.seconds = seconds;
  variant.timed_runs = 20;
  variant.dram_bytes = dram_bytes;
  variant.device = "NVIDIA H200";
  variant.measured_on = "2026-11-23";
  return variant;
}

TEST(TimeCalibrationFit, OverlapFromTwinsAndMmaSyncShareFromSweeps) {
  const TemporaryDirectory directory("swr-time-calibration");
  const auto sweep = [&](const char* name, double tflops) {
    const std::filesystem::path path = directory.path() / name;
    std::ofstream(path) << "size,stride,tile_order,median_ms,tflops,ratio_to_cublas\n"
                        << "4096,-1,cublas,0.1,999,1\n"
                        << "4096,0,row-major,0.2," << tflops / 2 << ",0.5\n"
                        << "8192,1536,n-bands-6,1.0," << tflops << ",0.9\n";
    return path;
  };
  CalibrationInputs inputs;
  inputs.mma_sync_sweep_csv = sweep("mma.csv", 300);
  inputs.wgmma_sweep_csv = sweep("wgmma.csv", 600);
  // Twins of 1 ms of compute, their DRAM times 0.2 and 0.05 ms, counted 0.4 x of it.
  const double bandwidth = 4.8e12;
  inputs.attention = {
      measured("m128n64w4s2-cyclic-grid-head_major", 1e-3 + 0.4 * 0.2e-3, 0.2e-3 * bandwidth),
      measured("m128n64w4s2-sawtooth-grid-head_major", 1e-3 + 0.4 * 0.05e-3, 0.05e-3 * bandwidth)};
  const TimeCalibration calibration = fit_time_calibration(inputs, builtin("h200"));
  EXPECT_DOUBLE_EQ(calibration.mma_sync_share, 0.5);
  EXPECT_NEAR(calibration.overlap, 0.4, 1e-4);
  EXPECT_EQ(calibration.overlap_pairs, 1);
  ASSERT_EQ(calibration.points.size(), 2u);
  for (const StepPoint& point : calibration.points) {
    EXPECT_NEAR(point.compute_seconds, 1e-3, 1e-9);
    EXPECT_TRUE(point.fits_l2);  // 256 KiB of K/V per head
    // 8 tiles of 16 steps on 264 slots: one wave.
    EXPECT_DOUBLE_EQ(point.makespan_steps, 16);
  }
  inputs.attention[1].gpu = "h100";
  EXPECT_THROW(fit_time_calibration(inputs, builtin("h200")), UsageError);
}

TEST(TransferFigures, RankingOfPredictedAgainstMeasured) {
  // Predicted order: 1, 2, 0, 3; measured best is 3 (9), the predicted best measured 12.
  const RankingFigures figures = ranking_figures({3, 1, 2, 4}, {10, 12, 10.1, 9});
  EXPECT_EQ(figures.predicted_best, 1u);
  EXPECT_EQ(figures.measured_best, 3u);
  EXPECT_DOUBLE_EQ(figures.regret, 12.0 / 9 - 1);
  EXPECT_EQ(figures.top_k_within_2_percent, 4);  // only the 4th predicted is within 2% of 9
  EXPECT_DOUBLE_EQ(ranking_figures({1, 2, 3}, {1, 2, 3}).spearman, 1.0);
  EXPECT_EQ(ranking_figures({1, 2, 3}, {1.01, 1, 3}).top_k_within_2_percent, 1);
}

}  // namespace
}  // namespace swr::model
