// Real NVRTC compilation of the GEMM template for sm_90a (H100/H200) and sm_121 (GB10), no GPU
// needed: a set of variants in which every knob value appears, each compiled without spills and
// within the register budget the resource model assumes.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "generator/gemm_kernel_source.hpp"
#include "generator/gemm_space.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/resource_model.hpp"
#include "swr/gpu_profile.hpp"
#include "tests/fixtures/problem_builders.hpp"

namespace swr {
namespace {

using fixtures::mma_sync_gemm_config;

struct GemmVariant {
  GemmConfig config;
  DataType dtype;
};

// Every tile shape once, block_k 32 and 64, stages 2..4, both persistences, both dtypes; all fit
// GB10's 99 KiB too. (The swizzle is a launch argument: it does not change the binary.)
std::vector<GemmVariant> representative_variants() {
  using P = GemmPersistence;
  return {
      {mma_sync_gemm_config(128, 128, 32, 2, 4, 3, P::grid), DataType::f16},
      {mma_sync_gemm_config(128, 256, 32, 2, 4, 4, P::static_loop), DataType::f16},
      {mma_sync_gemm_config(256, 128, 32, 4, 2, 2, P::grid), DataType::bf16},
      {mma_sync_gemm_config(128, 128, 64, 2, 2, 2, P::static_loop), DataType::bf16},
      {mma_sync_gemm_config(64, 128, 64, 2, 2, 4, P::grid), DataType::f16},
      {mma_sync_gemm_config(64, 64, 32, 2, 2, 3, P::static_loop), DataType::bf16},
  };
}

const NvrtcCompiler& compiler() {
  static const NvrtcCompiler instance;
  return instance;
}

TEST(GemmNvrtc, RepresentativeSetCoversEveryKnobValue) {
  std::set<std::string> seen;
  std::set<std::string> tiles_in_space;
  for (const GemmConfig& config : enumerate_gemm_configs())
    if (config.path == InstructionPath::mma_sync)
      tiles_in_space.insert(std::to_string(config.block_m) + "x" + std::to_string(config.block_n) +
                            "w" + std::to_string(config.warps()));
  for (const GemmVariant& variant : representative_variants()) {
    const GemmConfig& c = variant.config;
    seen.insert(std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "w" +
                std::to_string(c.warps()));
    seen.insert("k" + std::to_string(c.block_k));
    seen.insert("s" + std::to_string(c.stages));
    seen.insert(std::string(to_string(c.persistence)));
    seen.insert(std::string(to_string(variant.dtype)));
  }
  for (const std::string& tile : tiles_in_space) EXPECT_TRUE(seen.count(tile)) << tile;
  for (const char* value : {"k32", "k64", "s2", "s3", "s4", "grid", "static", "f16", "bf16"})
    EXPECT_TRUE(seen.count(value)) << value;
}

class GemmNvrtcCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(GemmNvrtcCompile, EveryRepresentativeVariantCompilesWithoutSpills) {
  const std::string arch = GetParam();
  const GpuProfile gpu = *find_gpu_profile(arch == "sm_121" ? "gb10" : "h200");
  for (const GemmVariant& variant : representative_variants()) {
    const GemmProblem problem{1000, 1000, 1000, variant.dtype};
    const KernelSource source = render_gemm_kernel(problem, variant.config);
    const CompiledKernel kernel = compiler().compile(source, arch);
    ASSERT_TRUE(kernel.ok) << source.name << " for " << arch << ":\n" << kernel.log;
    EXPECT_EQ(kernel.spill_bytes, 0) << source.name << " " << arch << "\n" << kernel.log;
    EXPECT_GT(kernel.registers, 0) << kernel.log;
    EXPECT_LE(kernel.registers, 255);
    EXPECT_EQ(kernel.static_shared_bytes, 0) << "all shared memory is dynamic";
    const ResourceUse use = gemm_resource_use(variant.config, gpu, kernel.registers);
    EXPECT_TRUE(use.does_not_fit.empty()) << source.name << ": " << use.does_not_fit;
    std::printf("%-36s %-7s %3d registers, %6d B shared, %.1f s\n", source.name.c_str(),
                arch.c_str(), kernel.registers, source.dynamic_shared_bytes,
                kernel.compile_seconds);
  }
}

INSTANTIATE_TEST_SUITE_P(BothTargets, GemmNvrtcCompile, ::testing::Values("sm_90a", "sm_121"));

GemmConfig make_wgmma(int block_m, int block_n, int stages, GemmConsumerMode mode,
                      GemmPersistence persistence, int cluster_m, int cluster_n = 1,
                      bool transposed = false) {
  GemmConfig config;
  config.path = InstructionPath::wgmma;
  config.block_m = block_m;
  config.block_n = block_n;
  config.block_k = 64;
  config.stages = stages;
  config.consumer_mode = mode;
  config.persistence = persistence;
  config.cluster_m = cluster_m;
  config.cluster_n = cluster_n;
  config.transposed = transposed;
  return config;
}

// Every wgmma tile of the space, both consumer modes, every persistence, every cluster shape and
// both dtypes, in nineteen binaries (CI has two cores; each wgmma compile takes a while). The 1x2
// cluster twice: the widest A share (128 rows of 256) and the narrowest (32 rows of 64); 2x2 with
// the 128x192 tile (B split 2 + 1 chunks down a cluster column), with the narrowest A share, and
// under stream-K. The widths that are not multiples of 64 (a part chunk) in bf16 and f16; 176
// also under stream-K, outside the space, whose fixup adds 22 quads in groups of 8, 8 and 6.
// Transposed (C^T = B^T A^T): a width that is a multiple of 64 and one that is not, in 2x2, and
// outside the space 1x1, pingpong (two m64 slices of MN-major A per warpgroup) and stream-K.
std::vector<GemmVariant> representative_wgmma_variants() {
  using M = GemmConsumerMode;
  using P = GemmPersistence;
  return {
      {make_wgmma(128, 256, 3, M::cooperative, P::static_loop, 2), DataType::f16},
      {make_wgmma(256, 128, 3, M::cooperative, P::dynamic_loop, 1), DataType::bf16},
      {make_wgmma(128, 192, 4, M::cooperative, P::static_loop, 2), DataType::bf16},
      {make_wgmma(128, 128, 4, M::cooperative, P::static_loop, 1), DataType::f16},
      {make_wgmma(128, 128, 4, M::pingpong, P::dynamic_loop, 1), DataType::f16},
      {make_wgmma(64, 256, 4, M::pingpong, P::static_loop, 2), DataType::bf16},
      {make_wgmma(256, 128, 3, M::cooperative, P::static_loop, 1, 2), DataType::f16},
      {make_wgmma(64, 256, 4, M::pingpong, P::static_loop, 1, 2), DataType::bf16},
      {make_wgmma(128, 256, 3, M::cooperative, P::stream_k, 2), DataType::f16},
      {make_wgmma(128, 192, 4, M::cooperative, P::static_loop, 2, 2), DataType::f16},
      {make_wgmma(64, 256, 4, M::pingpong, P::static_loop, 2, 2), DataType::bf16},
      {make_wgmma(128, 256, 3, M::cooperative, P::stream_k, 2, 2), DataType::bf16},
      {make_wgmma(128, 144, 4, M::cooperative, P::static_loop, 2, 2), DataType::bf16},
      {make_wgmma(128, 160, 4, M::cooperative, P::static_loop, 2, 2), DataType::f16},
      {make_wgmma(128, 176, 4, M::cooperative, P::static_loop, 2, 2), DataType::bf16},
      {make_wgmma(128, 208, 3, M::cooperative, P::static_loop, 2, 2), DataType::f16},
      {make_wgmma(128, 224, 3, M::cooperative, P::static_loop, 2, 2), DataType::bf16},
      {make_wgmma(128, 240, 3, M::cooperative, P::static_loop, 2, 2), DataType::bf16},
      {make_wgmma(128, 176, 4, M::cooperative, P::stream_k, 2, 2), DataType::f16},
      {make_wgmma(128, 176, 4, M::cooperative, P::static_loop, 2, 2, true), DataType::bf16},
      {make_wgmma(128, 256, 3, M::cooperative, P::static_loop, 2, 2, true), DataType::f16},
      {make_wgmma(128, 144, 4, M::cooperative, P::dynamic_loop, 1, 1, true), DataType::f16},
      {make_wgmma(128, 128, 4, M::pingpong, P::static_loop, 1, 2, true), DataType::bf16},
      {make_wgmma(128, 208, 3, M::cooperative, P::stream_k, 2, 1, true), DataType::bf16},
  };
}

std::string wgmma_binary_of(const GemmConfig& config) {
  return with_swizzle(config, 0, SwizzleAxis::n).key();
}

TEST(GemmNvrtc, WgmmaRepresentativeSetCoversEveryKnobValueOfTheSpace) {
  std::set<std::string> in_space;
  for (const GemmConfig& config : enumerate_gemm_configs()) {
    if (config.path != InstructionPath::wgmma) continue;
    in_space.insert(std::to_string(config.block_m) + "x" + std::to_string(config.block_n) + "s" +
                    std::to_string(config.stages) + std::string(to_string(config.consumer_mode)));
    in_space.insert(std::string(to_string(config.persistence)));
    in_space.insert("c" + std::to_string(config.cluster_m) + "x" +
                    std::to_string(config.cluster_n));
    in_space.insert(config.transposed ? "transposed" : "a_times_b");
  }
  std::set<std::string> seen;
  for (const GemmVariant& variant : representative_wgmma_variants()) {
    const GemmConfig& c = variant.config;
    seen.insert(std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "s" +
                std::to_string(c.stages) + std::string(to_string(c.consumer_mode)));
    seen.insert(std::string(to_string(c.persistence)));
    seen.insert("c" + std::to_string(c.cluster_m) + "x" + std::to_string(c.cluster_n));
    seen.insert(c.transposed ? "transposed" : "a_times_b");
    seen.insert(std::string(to_string(variant.dtype)));
  }
  EXPECT_EQ(in_space.size(), 12u + 3u + 4u + 2u)
      << "twelve tile/mode pairs (six of them widths that are not multiples of 64), three "
         "persistences, four cluster shapes, both product orders";
  for (const std::string& value : in_space) EXPECT_TRUE(seen.count(value)) << value;
  for (const char* value : {"f16", "bf16"}) EXPECT_TRUE(seen.count(value)) << value;
}

TEST(GemmNvrtc, EveryWgmmaKnobValueCompilesForSm90aWithoutSpills) {
  const GpuProfile gpu = *find_gpu_profile("h200");
  for (const GemmVariant& variant : representative_wgmma_variants()) {
    const GemmProblem problem{1000, 1000, 1000, variant.dtype};
    const KernelSource source = render_gemm_kernel(problem, variant.config);
    EXPECT_EQ(source.entry, std::string(kGemmWgmmaEntryName));
    EXPECT_EQ(source.threads_per_block, 384);
    const CompiledKernel kernel = compiler().compile(source, "sm_90a");
    // A setmaxnreg ptxas ignored (C7508) fails the build (generator/nvrtc_compiler.cpp).
    ASSERT_TRUE(kernel.ok) << source.name << ":\n" << kernel.log;
    EXPECT_EQ(kernel.log.find("C7508"), std::string::npos) << kernel.log;
    EXPECT_EQ(ptxas_wgmma_serialization(kernel.log), "") << source.name << "\n" << kernel.log;
    EXPECT_EQ(kernel.spill_bytes, 0) << source.name << "\n" << kernel.log;
    EXPECT_GT(kernel.registers, 0) << kernel.log;
    EXPECT_LE(kernel.registers, estimate_gemm_registers(variant.config))
        << "the entry's cap under __launch_bounds__(384, 1)";
    const ResourceUse use = gemm_resource_use(variant.config, gpu, kernel.registers);
    EXPECT_TRUE(use.does_not_fit.empty()) << source.name << ": " << use.does_not_fit;
    std::printf("%-52s sm_90a %3d registers, %6d B shared, %.1f s\n", source.name.c_str(),
                kernel.registers, source.dynamic_shared_bytes, kernel.compile_seconds);
  }
}

// Every wgmma binary of the space (f16; the representative set above covers bf16), so that no
// tile x persistence x cluster combination spills or loses its setmaxnreg: stream-K's fixup sits
// next to 128 live accumulators, where small changes moved ptxas between 0 and 48 bytes of spill.
TEST(GemmNvrtc, EveryWgmmaBinaryOfTheSpaceCompilesWithoutSpills) {
  const GpuProfile gpu = *find_gpu_profile("h200");
  std::set<std::string> binaries;
  for (const GemmConfig& config : enumerate_gemm_configs()) {
    if (config.path != InstructionPath::wgmma || config.swizzle_stride != 0) continue;
    if (!gemm_resource_use(config, gpu).does_not_fit.empty()) continue;  // pingpong stream-K
    const KernelSource source = render_gemm_kernel({1000, 1000, 1000, DataType::f16}, config);
    if (!binaries.insert(source.name).second) continue;
    const CompiledKernel kernel = compiler().compile(source, "sm_90a");
    ASSERT_TRUE(kernel.ok) << source.name << ":\n" << kernel.log;
    EXPECT_EQ(kernel.log.find("C7508"), std::string::npos) << source.name << "\n" << kernel.log;
    EXPECT_EQ(ptxas_wgmma_serialization(kernel.log), "") << source.name << "\n" << kernel.log;
    EXPECT_EQ(kernel.spill_bytes, 0) << source.name << "\n" << kernel.log;
  }
  EXPECT_EQ(binaries.size(), 56u) << "6 tile/mode pairs x 5 schedules + 4 cooperative x 3 "
                                     "stream-K + 6 widths in 2x2 + 8 transposed widths in 2x2";
}

TEST(GemmNvrtc, WgmmaRenderingFollowsTheTemplateContract) {
  const GemmConfig cluster =
      make_wgmma(128, 256, 3, GemmConsumerMode::cooperative, GemmPersistence::static_loop, 2);
  const KernelSource source = render_gemm_kernel({4096, 4096, 4096, DataType::bf16}, cluster);
  EXPECT_NE(source.text.find("#include \"gemm/sm90/gemm_kernel_ws.cuh\""), std::string::npos);
  EXPECT_NE(source.text.find("__cluster_dims__(Traits::kClusterSize, 1, 1)"), std::string::npos);
  EXPECT_NE(source.text.find("/*cluster_m*/ 2, /*cluster_n*/ 1,"), std::string::npos);
  GemmConfig along_n = cluster;
  along_n.cluster_m = 1;
  along_n.cluster_n = 2;
  const std::string along_n_text =
      render_gemm_kernel({4096, 4096, 4096, DataType::bf16}, along_n).text;
  EXPECT_NE(along_n_text.find("/*cluster_m*/ 1, /*cluster_n*/ 2,"), std::string::npos);
  EXPECT_NE(along_n_text.find("__cluster_dims__(Traits::kClusterSize, 1, 1)"), std::string::npos);
  GemmConfig both = cluster;
  both.cluster_n = 2;
  const KernelSource both_source = render_gemm_kernel({4096, 4096, 4096, DataType::bf16}, both);
  EXPECT_NE(both_source.text.find("/*cluster_m*/ 2, /*cluster_n*/ 2,"), std::string::npos);
  EXPECT_NE(both_source.text.find("__cluster_dims__(Traits::kClusterSize, 1, 1)"),
            std::string::npos);
  EXPECT_EQ(both_source.dynamic_shared_bytes, 214104) << "a cluster shares, it adds no memory";
  EXPECT_NE(source.text.find("swr::Element::bf16"), std::string::npos);
  EXPECT_EQ(source.dynamic_shared_bytes, 214104) << "the README's figure for 128x256 s3";
  GemmConfig single = cluster;
  single.cluster_m = 1;
  EXPECT_EQ(
      render_gemm_kernel({4096, 4096, 4096, DataType::bf16}, single).text.find("__cluster_dims__"),
      std::string::npos);
  // Swizzles share one binary.
  EXPECT_EQ(
      render_gemm_kernel({64, 64, 64, DataType::f16}, cluster).text,
      render_gemm_kernel({64, 64, 64, DataType::f16}, with_swizzle(cluster, 1792, SwizzleAxis::m))
          .text);
  EXPECT_EQ(wgmma_binary_of(cluster), "wgmma-m128n256k64s3-cooperative-c2x1-static-swz0");
}

}  // namespace
}  // namespace swr
