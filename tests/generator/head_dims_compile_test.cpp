// The mma_sync template at every head dim beyond 64 and 128 (those are in nvrtc_compiler_test's
// representative set), compiled by NVRTC for sm_121 (GB10) and sm_90a (H100/H200) with no spills,
// on tiles each head dim's space keeps on both; and the proof that grouped K/V heads and the causal
// alignment cost no variant: they are launch arguments, so a GQA bottom-right problem renders the
// very source (hence the cubin) of its multi-head top-left twin. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "generator/kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/resource_model.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {
namespace {

struct HeadDimVariant {
  int head_dim;
  DataType dtype;
  bool causal;
  const char* config;
};

// One variant per head dim, fp16 and bf16, causal and not, on tiles that fit GB10's 99 KiB.
const HeadDimVariant kVariants[] = {
    {32, DataType::f16, true, "m128n128w8s2-sawtooth-dynamic-groups4"},
    {80, DataType::bf16, false, "m128n64w4s2-cyclic-grid-head_major"},
    {96, DataType::f16, true, "m64n128w4s1-sawtooth-static-heads_interleaved"},
    {160, DataType::bf16, true, "m128n64w8s1-cyclic-dynamic-head_major"},
    {192, DataType::f16, false, "m64n64w4s1-sawtooth-grid-groups4"},
    {256, DataType::bf16, true, "m64n32w4s2-cyclic-static-head_major"},
    {256, DataType::f16, false, "m128n32w8s1-sawtooth-dynamic-heads_interleaved"},
};

AttentionProblem problem_of(const HeadDimVariant& variant) {
  AttentionProblem problem{2, 8, 1000, 1000, variant.head_dim, variant.dtype, variant.causal};
  return problem;
}

const NvrtcCompiler& compiler() {
  static const NvrtcCompiler instance;
  return instance;
}

struct CompileCase {
  std::string gpu;
  int variant;
};

void PrintTo(const CompileCase& c, std::ostream* out) {
  *out << c.gpu << " variant " << c.variant;
}

class HeadDimCompile : public ::testing::TestWithParam<CompileCase> {};

TEST_P(HeadDimCompile, CompilesWithoutSpills) {
  const GpuProfile gpu = find_gpu_profile(GetParam().gpu).value();
  const HeadDimVariant& variant = kVariants[GetParam().variant];
  const AttentionProblem problem = problem_of(variant);
  const AttentionConfig config = AttentionConfig::from_key(variant.config).value();
  const ResourceUse planned = attention_resource_use(problem, config, gpu);
  ASSERT_TRUE(planned.does_not_fit.empty()) << planned.does_not_fit;

  const KernelSource source = render_attention_kernel(problem, config);
  const CompiledKernel kernel = compiler().compile(source, gpu.arch);
  ASSERT_TRUE(kernel.ok) << source.name << "\n" << kernel.log;
  EXPECT_EQ(kernel.entry, kAttentionEntryName);
  EXPECT_GT(kernel.registers, 0) << kernel.log;
  EXPECT_EQ(kernel.spill_bytes, 0) << kernel.log;
  EXPECT_TRUE(attention_resource_use(problem, config, gpu, kernel.registers).does_not_fit.empty());
}

std::vector<CompileCase> compile_cases() {
  std::vector<CompileCase> cases;
  for (const char* gpu : {"gb10", "h200"}) {
    for (int i = 0; i < static_cast<int>(std::size(kVariants)); ++i) cases.push_back({gpu, i});
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<CompileCase>& info) {
  const HeadDimVariant& variant = kVariants[info.param.variant];
  std::string name = (info.param.gpu == "gb10" ? "sm121_d" : "sm90a_d") +
                     std::to_string(variant.head_dim) + "_" +
                     std::string(to_string(variant.dtype)) + "_" + variant.config;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(BothArchs, HeadDimCompile, ::testing::ValuesIn(compile_cases()),
                         case_name);

TEST(HeadDimCompile, TheSetCoversEveryHeadDimBothDtypesAndMasks) {
  std::set<std::string> seen;
  for (const HeadDimVariant& variant : kVariants) {
    seen.insert("d" + std::to_string(variant.head_dim));
    seen.insert(std::string(to_string(variant.dtype)));
    seen.insert(variant.causal ? "causal" : "noncausal");
  }
  for (int dim : kSupportedHeadDims) {
    if (dim == 64 || dim == 128) continue;  // nvrtc_compiler_test's representative set
    EXPECT_TRUE(seen.count("d" + std::to_string(dim))) << dim;
  }
  EXPECT_TRUE(seen.count("f16") && seen.count("bf16") && seen.count("causal") &&
              seen.count("noncausal"));
}

// Grouped K/V heads and the causal alignment are launch arguments (the AttentionArgs block): the
// kernel of a GQA, MQA or bottom-right problem is the one of its multi-head top-left twin.
TEST(HeadDimCompile, GroupedHeadsAndAlignmentRenderTheSameKernel) {
  for (const HeadDimVariant& variant : kVariants) {
    const AttentionConfig config = AttentionConfig::from_key(variant.config).value();
    const AttentionProblem mha = problem_of(variant);
    for (int kv_heads : {1, 2, 8}) {
      for (CausalAlignment align : {CausalAlignment::top_left, CausalAlignment::bottom_right}) {
        if (!mha.causal && align == CausalAlignment::bottom_right) continue;
        AttentionProblem problem = mha;
        problem.kv_heads = kv_heads;
        problem.seq_q = 300;  // S_q < S_kv: bottom-right shifts the diagonal by 700
        problem.causal_align = align;
        const KernelSource twin = render_attention_kernel(mha, config);
        const KernelSource source = render_attention_kernel(problem, config);
        EXPECT_EQ(source.text, twin.text) << problem.key();
        EXPECT_EQ(source.dynamic_shared_bytes, twin.dynamic_shared_bytes);
        EXPECT_EQ(source.name, twin.name);
      }
    }
  }
}

}  // namespace
}  // namespace swr
