// swr::Gemm with wgmma entries (sm_90a; skips elsewhere): variants of all three cluster shapes and
// both consumer modes, tuned into a database (stand-in times, real NVRTC builds for this device),
// run from the database through the cubin cache and from their export with NVRTC off, on odd
// sizes (M, N and K tails; exact and nearest shapes) with the output poisoned first, each checked
// against the fp32 GPU reference; and by the example program from the export without NVRTC.
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
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/runtime/runtime_fixtures.hpp"
#include "tuner/gemm_reference_kernel.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr::test {
namespace {

struct TunedWgmmaVariant {
  GemmProblem problem;
  const char* config;
};

const TunedWgmmaVariant kTunedWgmma[] = {
    {{1000, 1016, 264, DataType::f16}, "wgmma-m128n256k64s3-cooperative-c1x2-static-swzn512"},
    {{2048, 1024, 512, DataType::bf16}, "wgmma-m128n128k64s4-pingpong-c1x1-dynamic-swzm256"},
    {{777, 3000, 1032, DataType::bf16}, "wgmma-m128n256k64s3-cooperative-c2x1-static-swz0"},
};

// Exact shapes and nearest ones with tails in M, N and K (the nearest picks one of the above).
const GemmProblem kAsked[] = {{1000, 1016, 264, DataType::f16},  {333, 200, 264, DataType::f16},
                              {2048, 1024, 512, DataType::bf16}, {2050, 1000, 72, DataType::bf16},
                              {777, 3000, 1032, DataType::bf16}, {129, 2056, 1000, DataType::bf16}};

std::vector<std::uint16_t> random_elements(DataType type, std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<std::uint16_t> values(count);
  for (std::uint16_t& value : values) value = float_to_element(type, uniform(rng));
  return values;
}

class GemmWgmmaRuntimeOnGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (cuda_device_count() == 0) return;
    present_ = new GpuProfile(*detect_present_gpu());
    for (const TunedWgmmaVariant& variant : kTunedWgmma) {
      const ResourceUse use = gemm_resource_use(gemm_config_named(variant.config), *present_);
      if (!use.does_not_fit.empty()) return;  // not sm_90a: SetUp skips
    }
    scratch_ = new TemporaryDirectory();
    const std::unique_ptr<CubinBuilder> builder = make_nvrtc_cubin_builder(cubin_dir());
    db::GpuRecord gpu = db::GpuRecord::from_profile(*present_);
    gpu.driver_version = "test";
    gpu.cuda_version = "13.0";
    TunedDatabase tuned(database_path(), gpu);
    for (const TunedWgmmaVariant& variant : kTunedWgmma) {
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
    for (const TunedWgmmaVariant& variant : kTunedWgmma) {
      const ResourceUse use = gemm_resource_use(gemm_config_named(variant.config), *present_);
      if (!use.does_not_fit.empty()) GTEST_SKIP() << variant.config << ": " << use.does_not_fit;
    }
  }
  static std::filesystem::path export_dir() { return scratch_->path() / "export"; }
  static std::filesystem::path cubin_dir() { return scratch_->path() / "cubins"; }
  static std::filesystem::path database_path() { return scratch_->path() / "results.db"; }

  // Every asked shape through `gemm`, poisoned output, against the reference; the plans' origin.
  static void expect_matches_reference(const Gemm& gemm, const std::string& origin) {
    const CudaDriver& driver = CudaDriver::get();
    const DeviceContext context;
    const GemmReferenceKernel reference(context);
    CUstream stream = nullptr;
    SWR_CU(driver, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    std::mt19937 rng(1313);
    for (const GemmProblem& problem : kAsked) {
      SCOPED_TRACE(problem.key());
      const GemmPlan plan = gemm.plan(problem);
      EXPECT_EQ(plan.cubin_origin, origin);
      EXPECT_EQ(plan.choice.kernel->config.path, InstructionPath::wgmma);
      EXPECT_EQ(plan.grid % plan.choice.kernel->config.cluster_size(), 0) << "whole clusters";
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
      std::printf("%s: %s from %s, grid %d\n", problem.key().c_str(),
                  plan.choice.kernel->config_key.c_str(), plan.cubin_origin.c_str(), plan.grid);
    }
    driver.cuStreamDestroy(stream);
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
      {"--m", "1000", "--n", "1016", "--k", "264"},                    // exact, 1x2 cluster
      {"--m", "129", "--n", "2056", "--k", "1000", "--dtype", "bf16"}  // nearest, bf16
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
