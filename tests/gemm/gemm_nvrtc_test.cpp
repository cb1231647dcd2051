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

namespace swr {
namespace {

struct GemmVariant {
  GemmConfig config;
  DataType dtype;
};

GemmConfig make(int block_m, int block_n, int block_k, int warps_m, int warps_n, int stages,
                GemmPersistence persistence) {
  GemmConfig config;
  config.block_m = block_m;
  config.block_n = block_n;
  config.block_k = block_k;
  config.warps_m = warps_m;
  config.warps_n = warps_n;
  config.stages = stages;
  config.persistence = persistence;
  return config;
}

// Every tile shape once, block_k 32 and 64, stages 2..4, both persistences, both dtypes; all fit
// GB10's 99 KiB too. (The swizzle is a launch argument: it does not change the binary.)
std::vector<GemmVariant> representative_variants() {
  using P = GemmPersistence;
  return {
      {make(128, 128, 32, 2, 4, 3, P::grid), DataType::f16},
      {make(128, 256, 32, 2, 4, 4, P::static_loop), DataType::f16},
      {make(256, 128, 32, 4, 2, 2, P::grid), DataType::bf16},
      {make(128, 128, 64, 2, 2, 2, P::static_loop), DataType::bf16},
      {make(64, 128, 64, 2, 2, 4, P::grid), DataType::f16},
      {make(64, 64, 32, 2, 2, 3, P::static_loop), DataType::bf16},
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

}  // namespace
}  // namespace swr
