// Real NVRTC compilation of the templates for both targets (no GPU needed).
#include "generator/nvrtc_compiler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "generator/kernel_source.hpp"
#include "generator/resource_model.hpp"
#include "representative_variants.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {
namespace {

using testing::representative_variants;
using testing::Variant;

const NvrtcCompiler& compiler() {
  static const NvrtcCompiler instance;
  return instance;
}

bool is_elf(const std::vector<char>& bytes) {
  return bytes.size() > 4 && bytes[0] == '\x7f' && bytes[1] == 'E' && bytes[2] == 'L' &&
         bytes[3] == 'F';
}

bool contains_bytes(const std::vector<char>& bytes, const std::string& text) {
  return std::search(bytes.begin(), bytes.end(), text.begin(), text.end()) != bytes.end();
}

TEST(NvrtcCompiler, LoadsAndReportsItsVersion) {
  EXPECT_EQ(compiler().version().rfind("13.", 0), 0u) << compiler().version();
}

TEST(NvrtcCompiler, OptionsFollowTheContract) {
  const std::vector<std::string> options = compiler().options_for("sm_90a");
  const std::vector<std::string> expected = {"-arch=sm_90a", "-std=c++17", "--use_fast_math",
                                             "-default-device", "--ptxas-options=-v"};
  EXPECT_EQ(options, expected);
  EXPECT_EQ(compiler().options_for("sm_121").front(), "-arch=sm_121");
}

TEST(NvrtcCompiler, RepresentativeSetCoversEveryKnobValue) {
  std::set<std::string> seen;
  for (const Variant& variant : representative_variants()) {
    const AttentionConfig& c = variant.config;
    seen.insert("tile" + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "w" +
                std::to_string(c.warps));
    seen.insert("stages" + std::to_string(c.stages));
    seen.insert(std::string(to_string(c.order)));
    seen.insert(std::string(to_string(c.persistence)));
    seen.insert(std::string(to_string(c.swizzle)));
    seen.insert(std::string(to_string(variant.problem.dtype)));
    seen.insert(variant.problem.causal ? "causal" : "noncausal");
    seen.insert("d" + std::to_string(variant.problem.head_dim));
  }
  const std::set<std::string> every_value = {
      "tile64x64w4", "tile128x64w4", "tile128x64w8", "tile128x128w8", "tile64x128w4",
      "stages1",     "stages2",      "stages3",      "cyclic",        "sawtooth",
      "grid",        "static",       "dynamic",      "head_major",    "heads_interleaved",
      "head_groups", "f16",          "bf16",         "causal",        "noncausal",
      "d64",         "d128"};
  EXPECT_EQ(seen, every_value);
}

struct CompileCase {
  std::string gpu;
  int variant;
};

// Shown by gtest instead of the struct's bytes.
void PrintTo(const CompileCase& test_case, std::ostream* out) {
  *out << test_case.gpu << " variant " << test_case.variant;
}

class RepresentativeCompile : public ::testing::TestWithParam<CompileCase> {};

TEST_P(RepresentativeCompile, ProducesACubinWithAResourceReport) {
  const GpuProfile gpu = find_gpu_profile(GetParam().gpu).value();
  const Variant variant =
      representative_variants().at(static_cast<std::size_t>(GetParam().variant));
  const ResourceUse planned = attention_resource_use(variant.problem, variant.config, gpu);
  ASSERT_TRUE(planned.does_not_fit.empty()) << planned.does_not_fit;

  const KernelSource source = render_attention_kernel(variant.problem, variant.config);
  const CompiledKernel kernel = compiler().compile(source, gpu.arch);
  ASSERT_TRUE(kernel.ok) << source.name << "\n" << kernel.log;
  EXPECT_EQ(kernel.arch, gpu.arch);
  EXPECT_EQ(kernel.entry, kAttentionEntryName);
  EXPECT_TRUE(is_elf(kernel.cubin));
  EXPECT_TRUE(contains_bytes(kernel.cubin, kAttentionEntryName));
  // --ptxas-options=-v puts the report in the log; the parser found it.
  EXPECT_NE(kernel.log.find(std::string("Compiling entry function '") + kAttentionEntryName +
                            "' for '" + gpu.arch),
            std::string::npos)
      << kernel.log;
  EXPECT_GT(kernel.registers, 0) << kernel.log;
  EXPECT_LE(kernel.registers, 255);
  EXPECT_GE(kernel.spill_bytes, 0);
  EXPECT_GT(kernel.compile_seconds, 0);
  EXPECT_FALSE(kernel.from_cache);
  // With the compiler's register count the variant must still fit the target.
  const ResourceUse compiled =
      attention_resource_use(variant.problem, variant.config, gpu, kernel.registers);
  EXPECT_TRUE(compiled.does_not_fit.empty()) << compiled.does_not_fit;
}

std::vector<CompileCase> compile_cases() {
  std::vector<CompileCase> cases;
  for (const char* gpu : {"h200", "gb10"}) {
    for (int i = 0; i < static_cast<int>(representative_variants().size()); ++i) {
      cases.push_back({gpu, i});
    }
  }
  return cases;
}

// Test names like "sm90a_m128n64w8s3_cyclic_dynamic_groups4_d64_f16_causal".
std::string compile_case_name(const ::testing::TestParamInfo<CompileCase>& info) {
  const Variant variant =
      representative_variants().at(static_cast<std::size_t>(info.param.variant));
  std::string name = (info.param.gpu == "gb10" ? "sm121_" : "sm90a_") + variant.config.key() +
                     "_d" + std::to_string(variant.problem.head_dim) + "_" +
                     std::string(to_string(variant.problem.dtype)) +
                     (variant.problem.causal ? "_causal" : "_noncausal");
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(BothArchs, RepresentativeCompile, ::testing::ValuesIn(compile_cases()),
                         compile_case_name);

TEST(NvrtcCompiler, BrokenSourceReturnsTheLogInsteadOfThrowing) {
  KernelSource source;
  source.name = "broken.cu";
  source.entry = "swr_attention_forward";
  source.text = "extern \"C\" __global__ void swr_attention_forward() { this is not CUDA; }\n";
  const CompiledKernel kernel = compiler().compile(source, "sm_90a");
  EXPECT_FALSE(kernel.ok);
  EXPECT_TRUE(kernel.cubin.empty());
  EXPECT_NE(kernel.log.find("broken.cu"), std::string::npos) << kernel.log;
  EXPECT_NE(kernel.log.find("error"), std::string::npos) << kernel.log;
  EXPECT_EQ(kernel.registers, -1);
}

TEST(NvrtcCompiler, MissingHeaderAndBadArchAreFailuresNotExceptions) {
  KernelSource source;
  source.name = "missing.cu";
  source.entry = "k";
  source.text = "#include \"attention/not_there.cuh\"\n";
  CompiledKernel kernel = compiler().compile(source, "sm_121");
  EXPECT_FALSE(kernel.ok);
  EXPECT_NE(kernel.log.find("not_there.cuh"), std::string::npos) << kernel.log;

  source.text = "extern \"C\" __global__ void k() {}\n";
  kernel = compiler().compile(source, "sm_1");
  EXPECT_FALSE(kernel.ok);
  EXPECT_FALSE(kernel.log.empty());
}

TEST(NvrtcCompiler, IgnoredSetmaxnregIsABuildFailure) {
  // Without __launch_bounds__ ptxas cannot know the register count at entry and drops setmaxnreg
  // with warning C7508; with it the same kernel builds.
  KernelSource source;
  source.name = "setmaxnreg.cu";
  source.entry = "k";
  const std::string body =
      "void k(int* out) {\n"
      "  asm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\\n\" ::: \"memory\");\n"
      "  out[threadIdx.x] = 1;\n"
      "}\n";
  source.text = "extern \"C\" __global__ " + body;
  CompiledKernel kernel = compiler().compile(source, "sm_90a");
  EXPECT_FALSE(kernel.ok);
  EXPECT_TRUE(kernel.cubin.empty());
  EXPECT_NE(kernel.log.find("C7508"), std::string::npos) << kernel.log;
  EXPECT_NE(kernel.log.find("build failure"), std::string::npos) << kernel.log;

  source.text = "extern \"C\" __global__ __launch_bounds__(384, 1) " + body;
  kernel = compiler().compile(source, "sm_90a");
  EXPECT_TRUE(kernel.ok) << kernel.log;
  EXPECT_EQ(kernel.log.find("C7508"), std::string::npos) << kernel.log;
}

// `products` m64n256k16 wgmma products in flight at once, 128 accumulators each: two need more
// registers than a thread has, and ptxas serializes them (C7511); one does not.
std::string wgmma_products_in_flight(int products) {
  std::string operands;
  for (int i = 0; i < 128; ++i) operands += (i ? ",%" : "%") + std::to_string(i);
  std::string text =
      "extern \"C\" __global__ void __launch_bounds__(128, 1) k(float* out,\n"
      "    unsigned long long a, unsigned long long b) {\n"
      "  float acc[" +
      std::to_string(products) +
      "][128] = {};\n"
      "  asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n";
  for (int p = 0; p < products; ++p) {
    text +=
        "  asm volatile(\"{ .reg .pred q; setp.ne.b32 q, 1, 0; "
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" +
        operands + "}, %128, %129, q, 1, 1, 0, 0; }\"\n    : ";
    for (int i = 0; i < 128; ++i) {
      text += std::string(i ? ", " : "") + "\"+f\"(acc[" + std::to_string(p) + "][" +
              std::to_string(i) + "])";
    }
    text += "\n    : \"l\"(a), \"l\"(b));\n";
  }
  text +=
      "  asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
      "  asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
      "  for (int p = 0; p < " +
      std::to_string(products) +
      "; ++p)\n"
      "    for (int i = 0; i < 128; ++i) out[(p * 128 + i) * 128 + threadIdx.x] = acc[p][i];\n"
      "}\n";
  return text;
}

TEST(NvrtcCompiler, ReportsWgmmaThatPtxasSerialized) {
  KernelSource source;
  source.name = "in_flight.cu";
  source.entry = "k";
  source.text = wgmma_products_in_flight(2);
  CompiledKernel kernel = compiler().compile(source, "sm_90a");
  ASSERT_TRUE(kernel.ok) << kernel.log;  // correct, only slow: not a build failure
  const std::string why = ptxas_wgmma_serialization(kernel.log);
  EXPECT_EQ(why.rfind("C751", 0), 0u) << why << "\n" << kernel.log;
  EXPECT_NE(why.find("insufficient register resources"), std::string::npos) << why;

  source.text = wgmma_products_in_flight(1);
  kernel = compiler().compile(source, "sm_90a");
  ASSERT_TRUE(kernel.ok) << kernel.log;
  EXPECT_EQ(ptxas_wgmma_serialization(kernel.log), "") << kernel.log;
  EXPECT_EQ(ptxas_wgmma_serialization("ptxas info    : Used 12 registers"), "");
}

TEST(PtxasReport, ParsesTheEntrySection) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'other' for 'sm_90a'\n"
      "ptxas info    : Function properties for other\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, used 0 barriers, 380 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'swr_attention_forward' for 'sm_90a'\n"
      "ptxas info    : Function properties for swr_attention_forward\n"
      "    32 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 48 bytes smem, 432 bytes cmem[0]\n";
  const PtxasResources entry = parse_ptxas_resources(log, "swr_attention_forward");
  EXPECT_EQ(entry.registers, 168);
  EXPECT_EQ(entry.spill_bytes, 40);
  EXPECT_EQ(entry.static_shared_bytes, 48);
  const PtxasResources other = parse_ptxas_resources(log, "other");
  EXPECT_EQ(other.registers, 12);
  EXPECT_EQ(other.spill_bytes, 0);
  EXPECT_EQ(parse_ptxas_resources("no report here", "k").registers, -1);
}

}  // namespace
}  // namespace swr
