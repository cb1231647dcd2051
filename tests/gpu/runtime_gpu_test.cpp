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
#include "runtime/context_resources.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/attention.hpp"
#include "swr/device_buffer.hpp"
#include "swr/sixteen_bit.hpp"
#include "swr/swr.h"
#include "swr/usage_error.hpp"
#include "tests/gpu/attention_layouts.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/random_sixteen_bit.hpp"
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
    // GQA (8 query heads over 2 K/V heads), head dim 96, prefill over a cache (bottom-right).
    {{1, 8, 130, 333, 96, DataType::f16, true, 2, CausalAlignment::bottom_right},
     "m64n64w4s2-sawtooth-dynamic-groups4"},
};
constexpr int kMultiHeadTuned = 3;  // the first three: what the threads run

using gpu_test::random_elements;

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
        AttentionProblem problem = kTuned[t % kMultiHeadTuned].problem;
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

// The C API's prepared launch (what python/swr calls per tensor call): the same handle for the
// same problem, results matching the CPU reference on the context's thread and on a thread with
// no context current, and a handle of the other family refused with nothing launched.
TEST_F(RuntimeOnGpu, APreparedLaunchIsKeptOnceAndRunsOnAnyThreadOfItsContext) {
  const DeviceContext context;
  context.make_current();
  swr_catalog* catalog = nullptr;
  ASSERT_EQ(swr_catalog_open(export_dir().c_str(), &catalog), SWR_OK) << swr_last_error();
  const std::unique_ptr<swr_catalog, void (*)(swr_catalog*)> owned(catalog, swr_catalog_close);
  const AttentionProblem problem = kTuned[0].problem;  // dynamic persistence: a tile counter
  const swr_attention_problem asked{problem.batch,    problem.heads,
                                    problem.seq_q,    problem.seq_kv,
                                    problem.head_dim, to_string(problem.dtype).data(),
                                    problem.causal};
  swr_prepared* prepared = nullptr;
  swr_prepared* again = nullptr;
  ASSERT_EQ(swr_prepare_attention(catalog, nullptr, &asked, &prepared), SWR_OK) << swr_last_error();
  ASSERT_EQ(swr_prepare_attention(catalog, nullptr, &asked, &again), SWR_OK) << swr_last_error();
  EXPECT_EQ(prepared, again);

  const std::size_t count =
      static_cast<std::size_t>(problem.batch) * problem.heads * problem.seq_q * problem.head_dim;
  std::mt19937 rng(99);
  const auto q = random_elements(problem.dtype, count, rng);
  const auto k = random_elements(problem.dtype, count, rng);
  const auto v = random_elements(problem.dtype, count, rng);
  const std::vector<double> expected = reference_attention(problem, q, k, v);
  DeviceBuffer dq(count * 2), dk(count * 2), dv(count * 2), dout(count * 2);
  dq.copy_from_host(q.data(), count * 2);
  dk.copy_from_host(k.data(), count * 2);
  dv.copy_from_host(v.data(), count * 2);
  const std::vector<unsigned char> poison(count * 2, 0xff);
  auto launch = [&](std::uint64_t workspace = 0, std::uint32_t flags = 0) -> std::string {
    return swr_launch_attention(prepared, dq.pointer(), dk.pointer(), dv.pointer(), dout.pointer(),
                                workspace, flags, 0) == SWR_OK
               ? ""
               : swr_last_error();
  };
  auto compared = [&]() -> std::string {
    synchronize();
    std::vector<std::uint16_t> out(count);
    dout.copy_to_host(out.data(), count * 2);
    const OutputComparison result = compare_with_reference(problem, out, expected);
    return result.passes(relative_error_tolerance(problem.dtype))
               ? ""
               : "relative error " + std::to_string(result.relative_error);
  };
  for (int round = 0; round < 3; ++round) {
    dout.copy_from_host(poison.data(), count * 2);
    EXPECT_EQ(launch(), "") << round;
    EXPECT_EQ(compared(), "") << round;
  }
  dout.copy_from_host(poison.data(), count * 2);
  std::string other_thread = "not run";
  std::thread([&] { other_thread = launch(); }).join();  // no context is current there
  EXPECT_EQ(other_thread, "");
  EXPECT_EQ(compared(), "");

  // SWR_WORKSPACE_ZEROED, on a shape with more tiles than CTAs (so that the counter hands some
  // out): a counter the caller zeroed gives the output of a launch that clears its own; the same
  // counter used again unzeroed leaves tiles undone (poison remains), so the flag really skips
  // the clear; without the flag swr clears the caller's counter first.
  {
    const swr_attention_problem large{16, 8, 2048, 2048, 64, "f16", 0};  // nearest of kTuned[0]
    swr_prepared* many_tiles = nullptr;
    ASSERT_EQ(swr_prepare_attention(catalog, nullptr, &large, &many_tiles), SWR_OK)
        << swr_last_error();
    const std::size_t bytes = 2ull * 16 * 8 * 2048 * 64;
    std::vector<std::uint16_t> input(bytes / 2);
    for (std::size_t i = 0; i < input.size(); ++i)
      input[i] = float_to_element(DataType::f16, static_cast<float>(i % 17) / 17.f - 0.5f);
    DeviceBuffer lq(bytes), lout(bytes), counter(sizeof(int));
    lq.copy_from_host(input.data(), bytes);
    const std::vector<unsigned char> large_poison(bytes, 0xff);
    auto output_of = [&](std::uint64_t workspace, std::uint32_t flags) {
      lout.copy_from_host(large_poison.data(), bytes);
      EXPECT_EQ(swr_launch_attention(many_tiles, lq.pointer(), lq.pointer(), lq.pointer(),
                                     lout.pointer(), workspace, flags, 0),
                SWR_OK)
          << swr_last_error();
      synchronize();
      std::vector<unsigned char> out(bytes);
      lout.copy_to_host(out.data(), bytes);
      return out;
    };
    auto poisoned = [](const std::vector<unsigned char>& out) {  // 0xffff: a NaN never written
      std::size_t count = 0;
      for (std::size_t i = 0; i + 1 < out.size(); i += 2)
        count += out[i] == 0xff && out[i + 1] == 0xff;
      return count;
    };
    const std::vector<unsigned char> cleared_by_swr = output_of(0, 0);
    EXPECT_EQ(poisoned(cleared_by_swr), 0u);
    const int zero = 0;
    counter.copy_from_host(&zero, sizeof(int));
    EXPECT_TRUE(output_of(counter.pointer(), SWR_WORKSPACE_ZEROED) == cleared_by_swr);
    const std::vector<unsigned char> stale = output_of(counter.pointer(), SWR_WORKSPACE_ZEROED);
    EXPECT_GT(poisoned(stale), 0u);
    EXPECT_TRUE(output_of(counter.pointer(), 0) == cleared_by_swr);
    EXPECT_EQ(swr_launch_attention(many_tiles, lq.pointer(), lq.pointer(), lq.pointer(),
                                   lout.pointer(), counter.pointer(), 2, 0),
              SWR_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(swr_last_error(), "flags 2: allowed 0 or SWR_WORKSPACE_ZEROED (1)");

    // A workspace of 0 on a new stream: a fresh pool of zeroed counters, one per launch with no
    // clear between them; the launch that finds all taken clears the pool and takes the first
    // counter again, so it and the next launch leave no tile undone either.
    const CudaDriver& driver = CudaDriver::get();
    CUstream stream = nullptr;
    SWR_CU(driver, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    auto pooled_launch = [&] {
      return swr_launch_attention(many_tiles, lq.pointer(), lq.pointer(), lq.pointer(),
                                  lout.pointer(), 0, 0, reinterpret_cast<uintptr_t>(stream));
    };
    auto pooled_output = [&] {
      SWR_CU(driver, cuMemsetD8Async(lout.pointer(), 0xff, bytes, stream));
      EXPECT_EQ(pooled_launch(), SWR_OK) << swr_last_error();
      SWR_CU(driver, cuStreamSynchronize(stream));
      std::vector<unsigned char> out(bytes);
      lout.copy_to_host(out.data(), bytes);
      return out;
    };
    EXPECT_TRUE(pooled_output() == cleared_by_swr) << "first counter of the pool";
    for (int taken = 1; taken < StreamWorkspaces::kPooledCounters; ++taken) {
      ASSERT_EQ(pooled_launch(), SWR_OK) << swr_last_error();
    }
    EXPECT_TRUE(pooled_output() == cleared_by_swr) << "the pool cleared, its first counter again";
    EXPECT_TRUE(pooled_output() == cleared_by_swr) << "its second counter";
    SWR_CU(driver, cuStreamSynchronize(stream));
    driver.cuStreamDestroy(stream);
  }

  dout.copy_from_host(poison.data(), count * 2);
  EXPECT_EQ(swr_launch_gemm(prepared, dq.pointer(), dk.pointer(), dout.pointer(), 0),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(swr_last_error()).find("swr_prepare_gemm"), std::string::npos)
      << swr_last_error();
  EXPECT_EQ(swr_launch_attention(prepared, dq.pointer(), dk.pointer(), 0, dout.pointer(), 0, 0, 0),
            SWR_ERROR_KERNEL_REFUSED);
  EXPECT_TRUE(untouched(dout));
}

// A GQA bottom-right problem through swr::Attention and the C API's prepared launch, on Q/O and
// K/V stored as [B, S, H, D] projections (strides, no copy), against the CPU reference; strides
// that are no layout are a UsageError, rows a kernel cannot read a refusal, nothing launched.
TEST_F(RuntimeOnGpu, GroupedHeadsBottomRightOnStridedTensors) {
  const AttentionProblem problem = kTuned[3].problem;
  const gpu_test::TensorDims q_dims{problem.batch, problem.heads, problem.seq_q, problem.head_dim};
  const gpu_test::TensorDims kv_dims{problem.batch, problem.kv_head_count(), problem.seq_kv,
                                     problem.head_dim};
  std::mt19937 rng(7);
  const auto q = random_elements(problem.dtype, q_dims.elements(), rng);
  const auto k = random_elements(problem.dtype, kv_dims.elements(), rng);
  const auto v = random_elements(problem.dtype, kv_dims.elements(), rng);
  const std::vector<double> expected = reference_attention(problem, q, k, v);
  const gpu_test::Storage bshd = gpu_test::Storage::bshd;
  DeviceBuffer dq(q_dims.elements() * 2), dk(kv_dims.elements() * 2), dv(kv_dims.elements() * 2),
      dout(q_dims.elements() * 2);
  dq.copy_from_host(gpu_test::stored(q, bshd, q_dims).data(), q_dims.elements() * 2);
  dk.copy_from_host(gpu_test::stored(k, bshd, kv_dims).data(), kv_dims.elements() * 2);
  dv.copy_from_host(gpu_test::stored(v, bshd, kv_dims).data(), kv_dims.elements() * 2);
  AttentionTensors tensors{dq.pointer(), dk.pointer(), dv.pointer(), dout.pointer()};
  tensors.q_strides = tensors.o_strides = gpu_test::strides_of(bshd, q_dims);
  tensors.k_strides = tensors.v_strides = gpu_test::strides_of(bshd, kv_dims);
  const std::vector<unsigned char> poison(q_dims.elements() * 2, 0xff);
  auto compared = [&]() -> std::string {
    synchronize();
    std::vector<std::uint16_t> laid(q_dims.elements());
    dout.copy_to_host(laid.data(), laid.size() * 2);
    const OutputComparison result =
        compare_with_reference(problem, gpu_test::gathered(laid, bshd, q_dims), expected);
    return result.passes(relative_error_tolerance(problem.dtype))
               ? ""
               : "relative error " + std::to_string(result.relative_error) + ", non-finite " +
                     std::to_string(result.non_finite);
  };

  const Attention attention(TunedCatalog::open_export(export_dir()));
  EXPECT_EQ(attention.plan(problem).choice.match, MatchKind::exact);
  dout.copy_from_host(poison.data(), poison.size());
  attention.run(problem, tensors);
  EXPECT_EQ(compared(), "");

  // The C API's prepared launch with the strides, as swr.torch calls it for a strided view.
  const DeviceContext context;
  context.make_current();
  swr_catalog* catalog = nullptr;
  ASSERT_EQ(swr_catalog_open(export_dir().c_str(), &catalog), SWR_OK) << swr_last_error();
  const std::unique_ptr<swr_catalog, void (*)(swr_catalog*)> owned(catalog, swr_catalog_close);
  const swr_attention_problem_v2 asked{sizeof(swr_attention_problem_v2),
                                       problem.batch,
                                       problem.heads,
                                       problem.kv_heads,
                                       problem.seq_q,
                                       problem.seq_kv,
                                       problem.head_dim,
                                       "f16",
                                       1,
                                       SWR_CAUSAL_BOTTOM_RIGHT};
  swr_prepared* prepared = nullptr;
  ASSERT_EQ(swr_prepare_attention_v2(catalog, nullptr, &asked, &prepared), SWR_OK)
      << swr_last_error();
  swr_attention_strides strides{};
  const auto put = [](std::int64_t(&to)[4], const ElementStrides& from) {
    to[0] = from.batch, to[1] = from.head, to[2] = from.seq, to[3] = from.dim;
  };
  put(strides.q, tensors.q_strides);
  put(strides.o, tensors.o_strides);
  put(strides.k, tensors.k_strides);
  put(strides.v, tensors.v_strides);
  dout.copy_from_host(poison.data(), poison.size());
  ASSERT_EQ(swr_launch_attention_v2(prepared, dq.pointer(), dk.pointer(), dv.pointer(),
                                    dout.pointer(), &strides, 0, 0, 0),
            SWR_OK)
      << swr_last_error();
  EXPECT_EQ(compared(), "");

  // Not a layout (a D stride of 2), and rows 8 bytes off 16: refused, nothing launched.
  dout.copy_from_host(poison.data(), poison.size());
  AttentionTensors not_a_layout = tensors;
  not_a_layout.q_strides.dim = 2;
  EXPECT_THROW(attention.run(problem, not_a_layout), UsageError);
  AttentionTensors misaligned = tensors;
  misaligned.k_strides.seq += 4;
  misaligned.k_strides.batch += 4 * problem.seq_kv;
  EXPECT_THROW(attention.run(problem, misaligned), KernelRefused);
  EXPECT_TRUE(untouched(dout));
}

TEST_F(RuntimeOnGpu, NamesTheDeviceAsTheTunerDoes) {
  EXPECT_EQ(identify_device(current_context().device).gpu_name, present_->name);
  EXPECT_NE(current_device_description().find(present_->name), std::string::npos);
}

}  // namespace
}  // namespace swr::test
