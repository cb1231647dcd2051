// The runtime on the present GPU. Kernels tuned into a database (the measured builds compiled by
// NVRTC for this device's arch) are exported, then run from the export alone: by the example
// program with NVRTC turned off and shown not to be loaded, and by swr::Attention from 8 threads
// at once on their own streams, each answer checked against the CPU reference. Launches that
// cannot run (an arch the device cannot run, a shape nothing tuned can serve) are refused with
// nothing launched. Skips without a device.
#include <gtest/gtest.h>
#include <algorithm>
#include <fstream>
#include <latch>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "db/records.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "driver/device_identity.hpp"
#include "generator/cubin_cache.hpp"
#include "run_swr_tune.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/attention.hpp"
#include "swr/device_buffer.hpp"
#include "swr/sixteen_bit.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/runtime_gpu_fixtures.hpp"
#include "tests/runtime/runtime_fixtures.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/reference_attention.hpp"

namespace swr::test {
namespace {

struct TunedVariant {
  AttentionProblem problem;
  const char* config;
};

// The three persistence modes (dynamic needs its tile counter), both head dims and dtypes, causal
// and not, S_q != S_kv and odd lengths.
const TunedVariant kTuned[] = {
    {{2, 4, 1024, 1024, 64, DataType::f16, false}, "m64n64w4s2-cyclic-dynamic-head_major"},
    {{1, 2, 777, 901, 128, DataType::bf16, true}, "m64n64w4s2-sawtooth-static-head_major"},
    {{2, 3, 512, 512, 64, DataType::f16, true}, "m128n64w8s2-cyclic-grid-heads_interleaved"},
};

std::vector<std::uint16_t> random_elements(DataType type, std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<std::uint16_t> values(count);
  for (std::uint16_t& value : values) value = float_to_element(type, uniform(rng));
  return values;
}

class RuntimeOnGpu : public ::testing::Test {
 protected:
  // Tunes (stand-in times, real builds) and exports once for the suite.
  static void SetUpTestSuite() {
    if (cuda_device_count() == 0) return;
    scratch_ = new TemporaryDirectory();
    present_ = new GpuProfile(*detect_present_gpu());
    const std::filesystem::path cache = scratch_->path() / "cubins";
    const std::unique_ptr<CubinBuilder> builder = make_nvrtc_cubin_builder(cache);
    db::GpuRecord gpu = db::GpuRecord::from_profile(*present_);
    gpu.driver_version = "test";
    gpu.cuda_version = "13.0";
    TunedDatabase tuned(scratch_->path() / "results.db", gpu);
    for (const TunedVariant& variant : kTuned) {
      const BuiltCubin built =
          builder->build(variant.problem, config_named(variant.config), present_->arch);
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
  void SetUp() override { SWR_REQUIRE_GPU(); }
  static std::filesystem::path export_dir() { return scratch_->path() / "export"; }

  static TemporaryDirectory* scratch_;
  static GpuProfile* present_;
};

TemporaryDirectory* RuntimeOnGpu::scratch_ = nullptr;
GpuProfile* RuntimeOnGpu::present_ = nullptr;

TEST_F(RuntimeOnGpu, TheExampleRunsAnExportWithoutNvrtc) {
  if (example_path().empty()) GTEST_SKIP() << "SWR_BUILD_EXAMPLES is off";
  // NVRTC off: a cubin that is not in the export would be refused, not compiled. (The library
  // path is left alone: on some machines libcuda is found through it.
  // scripts/check-runtime-on-gpu.sh also hides libnvrtc itself where it can.)
  const std::map<std::string, std::string> no_nvrtc = {{"SWR_RUNTIME_NVRTC", "0"},
                                                       {"CUDA_HOME", "/nonexistent"}};
  const std::vector<std::vector<std::string>> shapes = {
      {"--batch", "2", "--heads", "4", "--seq", "1024", "--head-dim", "64"},  // exact, dynamic
      {"--batch", "3", "--heads", "4", "--seq", "1500", "--head-dim", "64"},  // nearest
      {"--batch", "1", "--heads", "2", "--seq", "777", "--seq-kv", "901", "--head-dim", "128",
       "--dtype", "bf16", "--causal"}};  // exact, static, bf16, causal
  for (const std::vector<std::string>& shape : shapes) {
    std::vector<std::string> arguments = {"--export", export_dir().string(), "--require-gpu"};
    arguments.insert(arguments.end(), shape.begin(), shape.end());
    const ProcessResult result = run_example(arguments, no_nvrtc);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("cubin: export"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find(": PASS"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("nvrtc loaded: no"), std::string::npos) << result.out;
  }
}

TEST_F(RuntimeOnGpu, EightThreadsLaunchAtOnceWithCorrectResults) {
  AttentionOptions options;
  options.allow_nvrtc = false;  // everything comes from the export
  const Attention attention(TunedCatalog::open_export(export_dir()), options);
  const CudaDriver& driver = CudaDriver::get();
  const DeviceContext context;
  constexpr int kThreads = 8;
  std::latch start(kThreads);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        context.make_current();
        AttentionProblem problem = kTuned[t % 3].problem;
        if (t >= 3) problem.seq_q += 37 * t;  // nearest shapes too
        const std::size_t q_count = static_cast<std::size_t>(problem.batch) * problem.heads *
                                    problem.seq_q * problem.head_dim;
        const std::size_t kv_count = static_cast<std::size_t>(problem.batch) * problem.heads *
                                     problem.seq_kv * problem.head_dim;
        std::mt19937 rng(1234 + t);
        const auto q = random_elements(problem.dtype, q_count, rng);
        const auto k = random_elements(problem.dtype, kv_count, rng);
        const auto v = random_elements(problem.dtype, kv_count, rng);
        const std::vector<double> expected = reference_attention(problem, q, k, v);
        DeviceBuffer dq(q_count * 2), dk(kv_count * 2), dv(kv_count * 2), dout(q_count * 2);
        dq.copy_from_host(q.data(), q_count * 2);
        dk.copy_from_host(k.data(), kv_count * 2);
        dv.copy_from_host(v.data(), kv_count * 2);
        CUstream stream = nullptr;
        SWR_CU(driver, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
        if (attention.plan(problem).cubin_origin != "export") failures[t] = "not from the export";
        start.arrive_and_wait();
        for (int round = 0; round < 5 && failures[t].empty(); ++round) {
          SWR_CU(driver, cuMemsetD8Async(dout.pointer(), 0xff, q_count * 2, stream));  // NaN
          attention.run(problem, {dq.pointer(), dk.pointer(), dv.pointer(), dout.pointer()},
                        stream);
          SWR_CU(driver, cuStreamSynchronize(stream));
          std::vector<std::uint16_t> out(q_count);
          dout.copy_to_host(out.data(), q_count * 2);
          const OutputComparison result = compare_with_reference(problem, out, expected);
          if (!result.passes(relative_error_tolerance(problem.dtype))) {
            failures[t] = problem.key() + " round " + std::to_string(round) + ": relative error " +
                          std::to_string(result.relative_error) + ", non-finite " +
                          std::to_string(result.non_finite);
          }
        }
        driver.cuStreamDestroy(stream);
      } catch (const std::exception& error) {
        failures[t] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST_F(RuntimeOnGpu, RefusesACubinForAnArchTheDeviceCannotRun) {
  const std::filesystem::path copy = scratch_->path() / "other-arch";
  const std::string foreign = present_->compute_major == 12 ? "sm_90a" : "sm_121";
  copy_export_for_arch(export_dir(), copy, "kernels", foreign);

  const Attention attention(TunedCatalog::open_export(copy));
  const AttentionProblem problem = kTuned[0].problem;
  const std::size_t bytes = 2ull * problem.batch * problem.heads * problem.seq_q * problem.head_dim;
  DeviceBuffer q(bytes), k(bytes), v(bytes), out(bytes);
  const std::vector<unsigned char> poison(bytes, 0xff);
  out.copy_from_host(poison.data(), bytes);
  try {
    attention.run(problem, {q.pointer(), k.pointer(), v.pointer(), out.pointer()});
    FAIL() << "expected AttentionRefused";
  } catch (const AttentionRefused& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("a cubin for " + foreign), std::string::npos) << message;
    EXPECT_NE(message.find("compute capability"), std::string::npos) << message;
  }
  EXPECT_TRUE(untouched(out));
}

TEST_F(RuntimeOnGpu, RefusesAShapeNothingTunedCanServe) {
  const Attention attention(TunedCatalog::open_export(export_dir()));
  const AttentionProblem problem{2, 4, 1024, 1024, 128, DataType::f16, false};  // d128 f16 dense
  const std::size_t bytes = 2ull * problem.batch * problem.heads * problem.seq_q * problem.head_dim;
  DeviceBuffer q(bytes), k(bytes), v(bytes), out(bytes);
  const std::vector<unsigned char> poison(bytes, 0xff);
  out.copy_from_host(poison.data(), bytes);
  try {
    attention.run(problem, {q.pointer(), k.pointer(), v.pointer(), out.pointer()});
    FAIL() << "expected AttentionRefused";
  } catch (const AttentionRefused& error) {
    EXPECT_NE(std::string(error.what()).find("no tuned kernel"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(untouched(out));
}

TEST_F(RuntimeOnGpu, NamesTheDeviceAsTheTunerDoes) {
  EXPECT_EQ(identify_device(current_context().device).gpu_name, present_->name);
  EXPECT_NE(current_device_description().find(present_->name), std::string::npos);
}

}  // namespace
}  // namespace swr::test
