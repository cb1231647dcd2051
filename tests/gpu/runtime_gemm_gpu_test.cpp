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
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/runtime_gpu_fixtures.hpp"
#include "tests/runtime/runtime_fixtures.hpp"
#include "tuner/gemm_reference_kernel.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr::test {
namespace {

struct TunedGemmVariant {
  GemmProblem problem;
  const char* config;
};

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

std::vector<std::uint16_t> random_elements(DataType type, std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<std::uint16_t> values(count);
  for (std::uint16_t& value : values) value = float_to_element(type, uniform(rng));
  return values;
}

class GemmRuntimeOnGpu : public ::testing::Test {
 protected:
  // Tunes (stand-in times, real builds) and exports once for the suite.
  static void SetUpTestSuite() {
    if (cuda_device_count() == 0) return;
    scratch_ = new TemporaryDirectory();
    present_ = new GpuProfile(*detect_present_gpu());
    const std::unique_ptr<CubinBuilder> builder =
        make_nvrtc_cubin_builder(scratch_->path() / "cubins");
    db::GpuRecord gpu = db::GpuRecord::from_profile(*present_);
    gpu.driver_version = "test";
    gpu.cuda_version = "13.0";
    TunedDatabase tuned(scratch_->path() / "results.db", gpu);
    for (const TunedGemmVariant& variant : kTunedGemms) {
      const GemmConfig config = gemm_config_named(variant.config);
      const BuiltCubin built = builder->build(variant.problem, config, present_->arch);
      tuned.add(variant.problem, variant.config, 0.05, "", built.source_hash);
    }
    ExportOptions options;
    options.gpu = present_->name;
    options.out_dir = export_dir();
    export_kernels(tuned.database(), *builder, options);
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
  const CudaDriver& driver = CudaDriver::get();
  const DeviceContext context;
  const GemmReferenceKernel reference(context);
  CUstream stream = nullptr;
  SWR_CU(driver, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  std::mt19937 rng(2024);
  for (const GemmProblem& problem : kAsked) {
    SCOPED_TRACE(problem.key());
    const GemmPlan plan = gemm.plan(problem);
    EXPECT_EQ(plan.cubin_origin, "export");
    EXPECT_EQ(plan.choice.kernel->problem.dtype, problem.dtype);
    EXPECT_GT(plan.grid, 0);
    const std::size_t a_count = std::size_t(problem.m) * problem.k;
    const std::size_t b_count = std::size_t(problem.k) * problem.n;
    const std::size_t c_count = std::size_t(problem.m) * problem.n;
    const auto a = random_elements(problem.dtype, a_count, rng);
    const auto b = random_elements(problem.dtype, b_count, rng);
    DeviceBuffer da(a_count * 2), db(b_count * 2), dc(c_count * 2), expected(c_count * 4);
    da.copy_from_host(a.data(), a_count * 2);
    db.copy_from_host(b.data(), b_count * 2);
    SWR_CU(driver, cuMemsetD8Async(dc.pointer(), 0xff, c_count * 2, stream));  // NaN
    gemm.run(problem, {da.pointer(), db.pointer(), dc.pointer()}, stream);
    reference.compute(problem, {da.pointer(), db.pointer(), 0}, expected.pointer(), stream);
    const OutputComparison result =
        reference.compare(problem, dc.pointer(), expected.pointer(), stream);
    EXPECT_TRUE(result.passes(relative_error_tolerance(problem.dtype)))
        << plan.choice.kernel->config_key << ": relative error " << result.relative_error << ", "
        << result.non_finite << " non-finite";
  }
  driver.cuStreamDestroy(stream);
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
