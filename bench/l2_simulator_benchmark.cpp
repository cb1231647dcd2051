// How long the L2 model takes for one variant of the target problem (B=8, S=131072, D=64):
// the model must rank a whole variant space, so one variant must take under 2 s on one core.
#include <benchmark/benchmark.h>

#include "model/l2_simulator.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace {

void simulate_one_variant(benchmark::State& state, const char* gpu_name, swr::KvOrder order,
                          swr::Persistence persistence, bool causal) {
  const swr::GpuProfile gpu = swr::find_gpu_profile(gpu_name).value();
  swr::AttentionProblem problem;
  problem.batch = 8;
  problem.heads = 1;
  problem.seq_q = problem.seq_kv = 131072;
  problem.head_dim = 64;
  problem.causal = causal;
  swr::AttentionConfig config;
  config.block_m = 64;
  config.block_n = 64;
  config.warps = 4;
  config.stages = 2;
  config.order = order;
  config.persistence = persistence;
  swr::model::SimulationResult result;
  for (auto _ : state) {
    result = swr::model::simulate_l2(problem, config, gpu);
    benchmark::DoNotOptimize(result.misses);
  }
  state.counters["misses"] = static_cast<double>(result.misses.total());
  state.counters["hit_rate"] = result.hit_rate;
  state.counters["sampled"] = result.sampled ? 1 : 0;
  state.counters["kv_steps"] = static_cast<double>(result.kv_steps_simulated);
}

}  // namespace

BENCHMARK_CAPTURE(simulate_one_variant, gb10_cyclic_static, "gb10", swr::KvOrder::cyclic,
                  swr::Persistence::static_loop, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_one_variant, gb10_sawtooth_static, "gb10", swr::KvOrder::sawtooth,
                  swr::Persistence::static_loop, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_one_variant, h200_cyclic_static, "h200", swr::KvOrder::cyclic,
                  swr::Persistence::static_loop, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_one_variant, h200_sawtooth_static, "h200", swr::KvOrder::sawtooth,
                  swr::Persistence::static_loop, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_one_variant, h200_sawtooth_dynamic_causal, "h200",
                  swr::KvOrder::sawtooth, swr::Persistence::dynamic, true)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
