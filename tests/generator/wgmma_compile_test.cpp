// Every value of the wgmma path's knobs, and every head dim, compiles for sm_90a with NVRTC: no
// spills, setmaxnreg honoured (C7508 fails the build), no wgmma that ptxas serialized, and the
// variant fits the H200 by the resource model both before and after compiling.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "generator/attention_space.hpp"
#include "generator/kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/resource_model.hpp"
#include "swr/gpu_profile.hpp"
#include "wgmma_variants.hpp"

namespace swr {
namespace {

using testing::Variant;
using testing::wgmma_variants;

TEST(WgmmaVariants, CoverEveryValueOfTheNewKnobs) {
  std::set<std::string> seen;
  for (const Variant& variant : wgmma_variants()) {
    const AttentionConfig& c = variant.config;
    seen.insert("wg" + std::to_string(c.consumer_warpgroups()));
    seen.insert("n" + std::to_string(c.block_n));
    seen.insert("s" + std::to_string(c.stages));
    seen.insert(c.overlap ? "ov" : "no-ov");
    seen.insert(c.pingpong ? "pp" : "no-pp");
    seen.insert(std::string(to_string(c.kv_cache_hint)));
    seen.insert(std::string(to_string(c.order)));
    seen.insert(std::string(to_string(c.persistence)));
    seen.insert(std::string(to_string(c.swizzle)));
    seen.insert(c.p_in_smem ? "psm" : "no-psm");
    seen.insert(std::string(to_string(variant.problem.dtype)));
    seen.insert(variant.problem.causal ? "causal" : "noncausal");
    seen.insert("d" + std::to_string(variant.problem.head_dim));
  }
  const std::set<std::string> every_value = {"wg2",
                                             "wg3",
                                             "n48",
                                             "n64",
                                             "n80",
                                             "n96",
                                             "n112",
                                             "n128",
                                             "n144",
                                             "n160",
                                             "n176",
                                             "n192",
                                             "s2",
                                             "s3",
                                             "ov",
                                             "no-ov",
                                             "pp",
                                             "no-pp",
                                             "none",
                                             "evict_last",
                                             "grid",
                                             "static",
                                             "dynamic",
                                             "psm",
                                             "no-psm",
                                             "cyclic",
                                             "sawtooth",
                                             "f16",
                                             "bf16",
                                             "causal",
                                             "noncausal",
                                             "d32",
                                             "d64",
                                             "d80",
                                             "d96",
                                             "d128",
                                             "d160",
                                             "d192",
                                             "d256",
                                             "head_major",
                                             "heads_interleaved",
                                             "head_groups"};
  EXPECT_EQ(seen, every_value);
}

TEST(WgmmaVariants, CoverEveryBlockNTheSpaceEnumeratesForEveryHeadDim) {
  const GpuProfile gpu = find_gpu_profile("h200").value();
  std::map<int, std::set<int>> covered, enumerated;  // head dim -> block_n
  for (const Variant& variant : wgmma_variants()) {
    covered[variant.problem.head_dim].insert(variant.config.block_n);
  }
  std::set<int> all_covered;
  for (const auto& [head_dim, block_ns] : covered)
    all_covered.insert(block_ns.begin(), block_ns.end());
  for (int head_dim : {32, 64, 80, 96, 128, 160, 192, 256}) {
    AttentionProblem problem = testing::make_problem(head_dim, DataType::f16, false);
    for (const AttentionConfig& c : enumerate_attention_configs(problem, gpu)) {
      if (!c.is_wgmma() || !attention_resource_use(problem, c, gpu).does_not_fit.empty()) continue;
      EXPECT_TRUE(all_covered.count(c.block_n)) << c.key() << " at D=" << head_dim;
    }
    EXPECT_FALSE(covered[head_dim].empty()) << "no variant compiles head dim " << head_dim;
  }
}

class WgmmaCompile : public ::testing::TestWithParam<int> {};

TEST_P(WgmmaCompile, CompilesForSm90aWithoutSpills) {
  const GpuProfile gpu = find_gpu_profile("h200").value();
  const Variant variant = wgmma_variants().at(static_cast<std::size_t>(GetParam()));
  const ResourceUse planned = attention_resource_use(variant.problem, variant.config, gpu);
  ASSERT_TRUE(planned.does_not_fit.empty()) << planned.does_not_fit;

  const KernelSource source = render_attention_kernel(variant.problem, variant.config);
  EXPECT_EQ(source.threads_per_block, 128 * (1 + variant.config.consumer_warpgroups()));
  static const NvrtcCompiler compiler;
  const CompiledKernel kernel = compiler.compile(source, gpu.arch);
  ASSERT_TRUE(kernel.ok) << source.name << "\n" << kernel.log;
  EXPECT_EQ(kernel.entry, kAttentionEntryName);
  EXPECT_EQ(kernel.spill_bytes, 0) << kernel.log;
  EXPECT_EQ(kernel.log.find("C7508"), std::string::npos) << kernel.log;
  EXPECT_EQ(ptxas_wgmma_serialization(kernel.log), "") << kernel.log;
  // The entry cap ptxas reports: the register file over 384 or 512 threads.
  EXPECT_EQ(kernel.registers, estimate_attention_registers(variant.problem, variant.config))
      << kernel.log;
  const ResourceUse compiled =
      attention_resource_use(variant.problem, variant.config, gpu, kernel.registers);
  EXPECT_TRUE(compiled.does_not_fit.empty()) << compiled.does_not_fit;
  EXPECT_EQ(compiled.blocks_per_sm, 1);
}

std::string case_name(const ::testing::TestParamInfo<int>& info) {
  const Variant variant = wgmma_variants().at(static_cast<std::size_t>(info.param));
  std::string name = variant.config.key() + "_d" + std::to_string(variant.problem.head_dim) + "_" +
                     std::string(to_string(variant.problem.dtype)) +
                     (variant.problem.causal ? "_causal" : "_noncausal");
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Sm90a, WgmmaCompile,
                         ::testing::Range(0, static_cast<int>(wgmma_variants().size())), case_name);

}  // namespace
}  // namespace swr
