// The partition model against hardware: bench/results/h200-l2-streaming measured 132 CTAs
// streaming one shared buffer 4 times in 16 KiB tiles on an H200, cyclic and sawtooth. The same
// access pattern is an attention problem: 4 rounds of 132 Q tiles (16 rows, so Q and O add
// little), each Q tile reading all of K and V (64-row tiles of D = 128: 16 KiB each), K + V = the
// buffer. The model's K + V misses must match the measured misses.
#include <gtest/gtest.h>

#include <cmath>

#include "model/l2_simulator.hpp"
#include "model_test_support.hpp"

namespace swr::model {
namespace {

struct Measured {
  int buffer_mib;
  double cyclic;
  double sawtooth;
};

// ncu lts__t_sectors_srcunit_tex_lookup_miss.sum, one run per point.
constexpr Measured kMeasured[] = {
    {16, 747272, 747096},      {24, 1122316, 1121800},   {32, 4806776, 1867612},
    {40, 7486312, 3365892},    {48, 8988116, 4864248},   {56, 10487588, 6362416},
    {64, 11986916, 7864044},   {80, 14984476, 10858948}, {96, 17987244, 13858704},
    {128, 23976856, 19862312},
};

double model_kv_misses(int buffer_mib, KvOrder order) {
  const GpuProfile h200 = testing::builtin("h200");
  AttentionProblem problem = testing::attention_problem(1, 1, 4 * 132 * 16, 128, false);
  problem.seq_kv = buffer_mib * 1024 * 1024 / (2 * 128 * 2);  // K and V of 256-byte rows
  const AttentionConfig config =
      testing::attention_config(16, 64, 1, order, Persistence::static_loop);
  SimulationOptions options;
  options.wave_size = 132;
  // A kernel that only streams has every sector of a first read counted 1.43 times, unlike
  // attention (whose profile value, 1.0, is fitted to the attention sweep).
  options.first_touch_miss_factor = h200.l2_shared_miss_factor;
  const SimulationResult result = simulate_l2(problem, config, h200, options);
  EXPECT_FALSE(result.sampled);
  return static_cast<double>(result.misses.k + result.misses.v);
}

TEST(H200StreamingCalibration, WithinTenPercentAwayFromTheFitPoint) {
  for (const Measured& point : kMeasured) {
    if (point.buffer_mib == 32) continue;  // see the next test
    for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
      const double measured = order == KvOrder::cyclic ? point.cyclic : point.sawtooth;
      const double predicted = model_kv_misses(point.buffer_mib, order);
      EXPECT_LT(std::abs(predicted - measured) / measured, 0.10)
          << point.buffer_mib << " MiB " << to_string(order) << ": predicted " << predicted
          << ", measured " << measured;
    }
  }
}

// Just past the fit point (32 MiB against 30 MiB per partition) LRU thrashes completely in cyclic
// order while the real L2 keeps about a fifth of the buffer: the model overestimates cyclic there
// (6.0M against 4.8M) and stays close for sawtooth. Pinned so that a change shows.
TEST(H200StreamingCalibration, JustPastTheFitPointLruOverestimatesCyclic) {
  const double cyclic = model_kv_misses(32, KvOrder::cyclic);
  EXPECT_GT(cyclic, 4806776 * 1.15);
  EXPECT_LT(cyclic, 4806776 * 1.35);
  EXPECT_LT(std::abs(model_kv_misses(32, KvOrder::sawtooth) - 1867612) / 1867612, 0.10);
}

}  // namespace
}  // namespace swr::model
