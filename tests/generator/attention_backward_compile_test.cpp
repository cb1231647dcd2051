// The attention backward's module compiled by NVRTC for sm_121 (GB10) and sm_90a (H200), no GPU
// needed: every tile and stage count its space keeps at every head dim (on the default schedule),
// and every schedule knob value (Q-walk order, persistence, swizzle, dQ accumulation) mixed on the
// base tile of each instruction path and kernel (the wgmma kernels' on sm_90a), the
// warp-specialized producer's every walk (order x persistence x swizzle), its dQ added from the
// consumers' registers under each persistence and sync, each with no
// spills, setmaxnreg honoured (no C7508) and no serialized wgmma, the resource model's register
// estimate confirmed by the compiler's count, and all three entries in the cubin.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/parallel_compiler.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {
namespace {

struct Variant {
  AttentionBackwardProblem problem;
  AttentionBackwardConfig config;
};

bool default_schedule(const AttentionBackwardConfig& config) {
  return config.order == KvOrder::cyclic && config.persistence == Persistence::grid &&
         config.swizzle == TileSwizzle::head_major && config.dq == DqAccumulation::atomic;
}

// The variants compiled for `gpu`: the space's tiles at each head dim (fp16 and bf16, causal and
// not, alternating), then the schedule knobs on the first runnable config of each kernel: of head
// dim 128, and of the wide-head kernel at head dim 256.
std::vector<Variant> variants(const GpuProfile& gpu) {
  std::vector<Variant> list;
  int alternate = 0;
  for (int head_dim : kSupportedHeadDims) {
    AttentionProblem shape{2,
                           8,
                           1000,
                           1000,
                           head_dim,
                           alternate % 2 ? DataType::bf16 : DataType::f16,
                           alternate % 3 != 1};
    ++alternate;
    const AttentionBackwardProblem problem{shape};
    for (const AttentionBackwardConfig& config :
         build_attention_backward_space(problem, gpu).configs) {
      if (default_schedule(config)) list.push_back({problem, config});
    }
  }
  const AttentionBackwardProblem problem{{2, 8, 1000, 1000, 128, DataType::bf16, true}};
  const AttentionBackwardProblem wide_problem{{2, 8, 1000, 1000, 256, DataType::f16, false}};
  const std::vector<AttentionBackwardConfig> space =
      build_attention_backward_space(problem, gpu).configs;
  const std::vector<AttentionBackwardConfig> wide_space =
      build_attention_backward_space(wide_problem, gpu).configs;
  const KvOrder orders[] = {KvOrder::sawtooth, KvOrder::cyclic, KvOrder::sawtooth};
  const Persistence persistences[] = {Persistence::static_loop, Persistence::dynamic,
                                      Persistence::grid};
  const TileSwizzle swizzles[] = {TileSwizzle::heads_interleaved, TileSwizzle::head_groups,
                                  TileSwizzle::head_major};
  const DqAccumulation dq[] = {DqAccumulation::deterministic, DqAccumulation::atomic,
                               DqAccumulation::deterministic};
  // The first config of each instruction path the GPU has is its base, and on wgmma that of each
  // kernel (warp-specialized or not).
  struct Kernel {
    InstructionPath path;
    bool warp_specialized;
    bool wide;
  };
  for (const Kernel kernel :
       {Kernel{InstructionPath::mma_sync, false, false},
        Kernel{InstructionPath::wgmma, true, false}, Kernel{InstructionPath::wgmma, false, false},
        Kernel{InstructionPath::wgmma, true, true}}) {
    const std::vector<AttentionBackwardConfig>& configs = kernel.wide ? wide_space : space;
    const auto base = std::find_if(configs.begin(), configs.end(), [&](const auto& config) {
      return config.path == kernel.path && config.warp_specialized() == kernel.warp_specialized &&
             config.splits_products() == kernel.wide;
    });
    if (base == configs.end()) continue;
    for (int i = 0; i < 3; ++i) {
      AttentionBackwardConfig config = *base;
      config.order = orders[i];
      config.persistence = persistences[i];
      config.swizzle = swizzles[i];
      config.head_group = swizzles[i] == TileSwizzle::head_groups ? 4 : 1;
      config.dq = dq[i];
      list.push_back({kernel.wide ? wide_problem : problem, config});
    }
  }
  // The warp-specialized producer walks every Q-walk order with every persistence and swizzle, at
  // each of its register budgets (head dims 64 and 128, causal; at 128 both Q tiles, 64 rows with
  // 40 producer registers and 80 with 24): with 24 registers some walks spilled 8 bytes where the
  // mixes above did not look. Then each persistence under both consumer syncs, with the mask and
  // without: static persistence's tile loop once spilled in the consumers, without the mask only.
  for (const auto [head_dim, block_m] :
       {std::pair{64, 128}, std::pair{128, 64}, std::pair{128, 80}}) {
    for (const bool causal : {true, false}) {
      const AttentionBackwardProblem walk_problem{
          {2, 8, 1000, 1000, head_dim, DataType::bf16, causal}};
      const std::vector<AttentionBackwardConfig> walk_space =
          build_attention_backward_space(walk_problem, gpu).configs;
      const auto base = std::find_if(walk_space.begin(), walk_space.end(), [&](const auto& config) {
        return config.warp_specialized() && !config.splits_products() &&
               config.block_m == block_m && !config.cta_pairs;
      });
      if (base == walk_space.end()) continue;
      const auto add = [&](AttentionBackwardConfig config) {
        if (attention_backward_tile_problem(walk_problem, config).empty()) {
          list.push_back({walk_problem, config});
        }
      };
      // Every order and swizzle of `config`'s walk.
      const auto add_every_walk = [&](AttentionBackwardConfig config) {
        for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
          for (TileSwizzle swizzle : {TileSwizzle::head_major, TileSwizzle::heads_interleaved,
                                      TileSwizzle::head_groups}) {
            config.order = order;
            config.swizzle = swizzle;
            config.head_group = swizzle == TileSwizzle::head_groups ? 4 : 1;
            add(config);
          }
        }
      };
      int mix = 0;
      for (Persistence persistence :
           {Persistence::grid, Persistence::static_loop, Persistence::dynamic}) {
        for (ConsumerSync consumers : {ConsumerSync::lockstep, ConsumerSync::lagged}) {
          AttentionBackwardConfig config = *base;
          config.persistence = persistence;
          config.consumers = consumers;
          if (causal && consumers == ConsumerSync::lockstep) {
            add_every_walk(config);
            continue;
          }
          config.order = mix % 2 ? KvOrder::sawtooth : KvOrder::cyclic;
          config.swizzle =
              mix++ % 3 == 1 ? TileSwizzle::heads_interleaved : TileSwizzle::head_major;
          config.head_group = 1;
          add(config);
        }
      }
    }
  }
  // dQ from the consumers' registers, as the space keeps it (head dim 64, causal, three stages):
  // each persistence with both syncs (dynamic's queue without the writer as a reader), and a pair.
  const AttentionBackwardProblem registers_problem{{2, 8, 1000, 1000, 64, DataType::f16, true}};
  for (const AttentionBackwardConfig& config :
       build_attention_backward_space(registers_problem, gpu).configs) {
    if (config.dq_from_registers && config.order == KvOrder::cyclic &&
        config.swizzle == TileSwizzle::head_major) {
      list.push_back({registers_problem, config});
    }
  }
  return list;
}

class BackwardCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(BackwardCompile, EveryTileAndKnobCompilesWithoutSpills) {
  const GpuProfile gpu = find_gpu_profile(GetParam()).value();
  const std::vector<Variant> list = variants(gpu);
  std::vector<KernelSource> sources;
  for (const Variant& variant : list) {
    sources.push_back(render_attention_backward_kernel(variant.problem, variant.config));
  }
  const NvrtcCompiler compiler;
  const std::vector<CompiledKernel> kernels =
      compile_sources(compiler, nullptr, sources, gpu.arch,
                      static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const CompiledKernel& kernel = kernels[i];
    SCOPED_TRACE(sources[i].name + " for " + gpu.arch);
    ASSERT_TRUE(kernel.ok) << kernel.log;
    EXPECT_EQ(kernel.spill_bytes, 0) << kernel.log;
    EXPECT_GT(kernel.registers, 0) << kernel.log;
    // The register estimate that let the space keep it is not below what the compiler needed
    // only by more than the compiler can save (the estimate is a pruning rule, not a bound).
    EXPECT_TRUE(
        attention_backward_resource_use(list[i].problem, list[i].config, gpu, kernel.registers)
            .does_not_fit.empty());
    for (const std::string& entry : sources[i].launch_sequence) {
      EXPECT_NE(kernel.log.find("Compiling entry function '" + entry + "'"), std::string::npos)
          << entry;
    }
    EXPECT_EQ(kernel.log.find("C7508"), std::string::npos) << kernel.log;
    // Nor wgmma instructions that ptxas serialized: each would be waited for one by one.
    EXPECT_EQ(ptxas_wgmma_serialization(kernel.log), "") << kernel.log;
  }
}

INSTANTIATE_TEST_SUITE_P(Gb10AndH200, BackwardCompile, ::testing::Values("gb10", "h200"));

}  // namespace
}  // namespace swr
