// swr::Gemm on the present GPU. GEMM variants (both persistence modes, swizzles along n and m, f16
// and bf16) tuned into a database with the builds NVRTC makes for this device's arch are exported,
// then run from the export alone with NVRTC off: on odd sizes (M, N and K tails; exact and nearest
// shapes) with the output poisoned first, each checked against the fp32 GPU reference; by the
// example program; and refused, output untouched, for a cubin arch the device cannot run. Skips
// without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

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
#include "tests/gpu/runtime_gpu_fixtures.hpp"
#include "tests/runtime/runtime_fixtures.hpp"
#include "tuner/gemm_reference_kernel.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr::test {
namespace {

const TunedGemmVariant kTunedGemms[] = {
    {{1024, 1024, 1024, DataType::f16}, "m128n128k32w2x4s3-grid-swzn256"},
    {{2048, 512, 256, DataType::f16}, "m64n128k32w2x2s3-static-swzm512"},
    {{768, 520, 1032, DataType::bf16}, "m64n64k32w2x2s2-static-swzn128"},
};

// Tails in M, N and K, K below the pipeline depth, one exact shape and nearest ones of both
// persistence modes and dtypes.
const GemmProblem kAsked[] = {{1024, 1024, 1024, DataType::f16}, {333, 200, 264, DataType::f16},
                              {1000, 1016, 72, DataType::f16},   {2050, 512, 264, DataType::f16},
                              {77, 520, 1032, DataType::bf16},   {129, 8, 8, DataType::bf16}};

class GemmRuntimeOnGpu : public ::testing::Test {
 protected:
  // Tunes (stand-in times, real builds) and exports once for the suite.
  static void SetUpTestSuite() {
    if (cuda_device_count() == 0) return;
    scratch_ = new TemporaryDirectory();
    present_ = new GpuProfile(*detect_present_gpu());
    tune_and_export(kTunedGemms, *present_, scratch_->path());
  }
  static void TearDownTestSuite() {
    delete present_;
    delete scratch_;
    present_ = nullptr;
    scratch_ = nullptr;
  }
  void SetUp() override {
    SWR_REQUIRE_GPU();
    for (const TunedGemmVariant& variant : kTunedGemms) {
      const ResourceUse use = gemm_resource_use(gemm_config_named(variant.config), *present_);
      if (!use.does_not_fit.empty()) GTEST_SKIP() << variant.config << ": " << use.does_not_fit;
    }
  }
  static std::filesystem::path export_dir() { return scratch_->path() / "export"; }

  static TemporaryDirectory* scratch_;
  static GpuProfile* present_;
};

TemporaryDirectory* GemmRuntimeOnGpu::scratch_ = nullptr;
GpuProfile* GemmRuntimeOnGpu::present_ = nullptr;

TEST_F(GemmRuntimeOnGpu, RunsOddSizesFromTheExportAgainstTheReference) {
  RuntimeOptions options;
  options.allow_nvrtc = false;  // everything comes from the export
  const Gemm gemm(TunedCatalog::open_export(export_dir()), options);
  expect_gemm_matches_reference(gemm, kAsked, 2024,
                                [](const GemmProblem& problem, const GemmPlan& plan) {
                                  EXPECT_EQ(plan.cubin_origin, "export");
                                  EXPECT_EQ(plan.choice.kernel->problem.dtype, problem.dtype);
                                  EXPECT_GT(plan.grid, 0);
                                });
}

TEST_F(GemmRuntimeOnGpu, PlansTheGeometryOfItsPersistenceMode) {
  const Gemm gemm(TunedCatalog::open_export(export_dir()));
  const GemmPlan grid = gemm.plan({1000, 1016, 1000, DataType::f16});  // nearest 1024^3: grid
  ASSERT_EQ(grid.choice.kernel->config.persistence, GemmPersistence::grid);
  EXPECT_EQ(grid.grid, 8 * 8);  // one CTA per 128 x 128 tile
  EXPECT_EQ(grid.block_threads, 256);
  EXPECT_EQ(grid.swizzle_axis, 0);
  EXPECT_EQ(grid.swizzle_group, 2);  // 256 / block_n 128
  const GemmPlan persistent = gemm.plan({2048, 512, 256, DataType::f16});
  ASSERT_EQ(persistent.choice.match, MatchKind::exact);
  ASSERT_EQ(persistent.choice.kernel->config.persistence, GemmPersistence::static_loop);
  EXPECT_GT(persistent.grid, 0);
  EXPECT_LE(persistent.grid, 32 * 4);  // at most the tiles (and at most one wave)
  EXPECT_EQ(persistent.swizzle_axis, 1);
  EXPECT_EQ(persistent.swizzle_group, 8);  // 512 / block_m 64
}

TEST_F(GemmRuntimeOnGpu, TheExampleRunsAnExportWithoutNvrtc) {
  if (gemm_example_path().empty()) GTEST_SKIP() << "SWR_BUILD_EXAMPLES is off";
  const std::map<std::string, std::string> no_nvrtc = {{"SWR_RUNTIME_NVRTC", "0"},
                                                       {"CUDA_HOME", "/nonexistent"}};
  const std::vector<std::vector<std::string>> shapes = {
      {"--size", "1024"},                                              // exact, grid
      {"--m", "1000", "--n", "1016", "--k", "264"},                    // nearest
      {"--m", "77", "--n", "520", "--k", "1032", "--dtype", "bf16"}};  // nearest, bf16, static
  for (const std::vector<std::string>& shape : shapes) {
    std::vector<std::string> arguments = {"--export", export_dir().string(), "--require-gpu"};
    arguments.insert(arguments.end(), shape.begin(), shape.end());
    const ProcessResult result = run_gemm_example(arguments, no_nvrtc);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("cubin: export"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find(": PASS"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("nvrtc loaded: no"), std::string::npos) << result.out;
  }
}

TEST_F(GemmRuntimeOnGpu, RefusesACubinForAnArchTheDeviceCannotRun) {
  const std::filesystem::path copy = scratch_->path() / "other-arch";
  const std::string foreign = present_->compute_major == 12 ? "sm_90a" : "sm_121";
  copy_export_for_arch(export_dir(), copy, "gemm_kernels", foreign);

  const Gemm gemm(TunedCatalog::open_export(copy));
  const GemmProblem problem{333, 200, 264, DataType::f16};
  DeviceBuffer a(2ull * problem.m * problem.k), b(2ull * problem.k * problem.n);
  DeviceBuffer c(2ull * problem.m * problem.n);
  const std::vector<unsigned char> poison(c.size(), 0xff);
  c.copy_from_host(poison.data(), c.size());
  try {
    gemm.run(problem, {a.pointer(), b.pointer(), c.pointer()});
    FAIL() << "expected GemmRefused";
  } catch (const GemmRefused& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("a cubin for " + foreign), std::string::npos) << message;
  }
  EXPECT_THROW(gemm.run(problem, {a.pointer(), 0, c.pointer()}), GemmRefused);
  EXPECT_TRUE(untouched(c));
}

}  // namespace
}  // namespace swr::test
