// swr::Gemm with wgmma entries (sm_90a; skips elsewhere): variants of all three cluster shapes,
// both consumer modes and both product orders (one computes C^T = B^T A^T), tuned into a database
// (stand-in times, real NVRTC builds for this device), run from the database through the cubin
// cache and from their export with NVRTC off, on odd sizes (M, N and K tails; exact and nearest
// shapes) with the output poisoned first, each checked against the fp32 GPU reference; and by the
// example program from the export without NVRTC.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "db/records.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "generator/resource_model.hpp"
#include "run_swr_tune.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/device_buffer.hpp"
#include "swr/gemm.hpp"
#include "swr/sixteen_bit.hpp"
#include "tests/gpu/gemm_runtime_checks.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/runtime/runtime_fixtures.hpp"
#include "tuner/gemm_reference_kernel.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr::test {
namespace {

const TunedGemmVariant kTunedWgmma[] = {
    {{1000, 1016, 264, DataType::f16}, "wgmma-m128n256k64s3-cooperative-c1x2-static-swzn512"},
    {{2048, 1024, 512, DataType::bf16}, "wgmma-m128n128k64s4-pingpong-c1x1-dynamic-swzm256"},
    {{777, 3000, 1032, DataType::bf16}, "wgmma-m128n256k64s3-cooperative-c2x1-static-swz0"},
    {{3001, 1000, 520, DataType::f16},
     "wgmma-m128n176k64s4-cooperative-c2x2-transposed-static-swzm1536"},
};

// Exact shapes and nearest ones with tails in M, N and K (the nearest picks one of the above).
const GemmProblem kAsked[] = {{1000, 1016, 264, DataType::f16},  {333, 200, 264, DataType::f16},
                              {2048, 1024, 512, DataType::bf16}, {2050, 1000, 72, DataType::bf16},
                              {777, 3000, 1032, DataType::bf16}, {129, 2056, 1000, DataType::bf16},
                              {3001, 1000, 520, DataType::f16},  {2999, 1008, 512, DataType::f16}};

class GemmWgmmaRuntimeOnGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (cuda_device_count() == 0) return;
    present_ = new GpuProfile(*detect_present_gpu());
    for (const TunedGemmVariant& variant : kTunedWgmma) {
      const ResourceUse use = gemm_resource_use(gemm_config_named(variant.config), *present_);
      if (!use.does_not_fit.empty()) return;  // not sm_90a: SetUp skips
    }
    scratch_ = new TemporaryDirectory();
    tune_and_export(kTunedWgmma, *present_, scratch_->path());
  }
  static void TearDownTestSuite() {
    delete present_;
    delete scratch_;
    present_ = nullptr;
    scratch_ = nullptr;
  }
  void SetUp() override {
    SWR_REQUIRE_GPU();
    for (const TunedGemmVariant& variant : kTunedWgmma) {
      const ResourceUse use = gemm_resource_use(gemm_config_named(variant.config), *present_);
      if (!use.does_not_fit.empty()) GTEST_SKIP() << variant.config << ": " << use.does_not_fit;
    }
  }
  static std::filesystem::path export_dir() { return scratch_->path() / "export"; }
  static std::filesystem::path cubin_dir() { return scratch_->path() / "cubins"; }
  static std::filesystem::path database_path() { return scratch_->path() / "results.db"; }

  // Every asked shape through `gemm` against the reference, from `origin`, whole clusters.
  static void expect_matches_reference(const Gemm& gemm, const std::string& origin) {
    expect_gemm_matches_reference(
        gemm, kAsked, 1313, [&](const GemmProblem&, const GemmPlan& plan) {
          EXPECT_EQ(plan.cubin_origin, origin);
          EXPECT_EQ(plan.choice.kernel->config.path, InstructionPath::wgmma);
          EXPECT_EQ(plan.grid % plan.choice.kernel->config.cluster_size(), 0) << "whole clusters";
        });
  }

  static TemporaryDirectory* scratch_;
  static GpuProfile* present_;
};

TemporaryDirectory* GemmWgmmaRuntimeOnGpu::scratch_ = nullptr;
GpuProfile* GemmWgmmaRuntimeOnGpu::present_ = nullptr;

TEST_F(GemmWgmmaRuntimeOnGpu, RunsOddSizesFromTheDatabaseThroughTheCubinCache) {
  RuntimeOptions options;
  options.allow_nvrtc = false;  // the tune's builds are in the cache: nothing is compiled
  options.cubin_cache_dir = cubin_dir();
  expect_matches_reference(Gemm(TunedCatalog::open_database(database_path()), options),
                           "cubin cache");
}

TEST_F(GemmWgmmaRuntimeOnGpu, RunsOddSizesFromTheExportWithoutNvrtc) {
  RuntimeOptions options;
  options.allow_nvrtc = false;
  expect_matches_reference(Gemm(TunedCatalog::open_export(export_dir()), options), "export");
}

TEST_F(GemmWgmmaRuntimeOnGpu, TheExampleRunsAWgmmaEntryOfTheExportWithoutNvrtc) {
  if (gemm_example_path().empty()) GTEST_SKIP() << "SWR_BUILD_EXAMPLES is off";
  const std::map<std::string, std::string> no_nvrtc = {{"SWR_RUNTIME_NVRTC", "0"},
                                                       {"CUDA_HOME", "/nonexistent"}};
  const std::vector<std::vector<std::string>> shapes = {
      {"--m", "1000", "--n", "1016", "--k", "264"},                     // exact, 1x2 cluster
      {"--m", "129", "--n", "2056", "--k", "1000", "--dtype", "bf16"},  // nearest, bf16
      {"--m", "3001", "--n", "1000", "--k", "520"}                      // exact, transposed
  };
  for (const std::vector<std::string>& shape : shapes) {
    std::vector<std::string> arguments = {"--export", export_dir().string(), "--require-gpu"};
    arguments.insert(arguments.end(), shape.begin(), shape.end());
    const ProcessResult result = run_gemm_example(arguments, no_nvrtc);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("wgmma-"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("cubin: export"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find(": PASS"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("nvrtc loaded: no"), std::string::npos) << result.out;
  }
}

}  // namespace
}  // namespace swr::test
