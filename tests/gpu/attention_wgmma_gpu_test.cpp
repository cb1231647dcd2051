// Every knob value and head dim of the sm_90a wgmma attention path (the covering set CI compiles,
// tests/generator/wgmma_variants.hpp), launched through the runtime launcher with a poisoned
// output on odd shapes of models (grouped and single K/V heads, [B, S, H, D] and [B, H, S, D]
// storage, both causal alignments with S_q <, = and > S_kv) and checked against the
// double-precision reference; the tensor-map cache and the refusals before launch. Skips where the
// device is not sm_90a. Opt-in (SWR_WGMMA_TWIN_TIMING=1): the new knob values (dynamic persistence,
// P in shared memory) timed interleaved against their twins at B2 H16 S16384 D128.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "driver/device_resources.hpp"
#include "generator/cubin_cache.hpp"
#include "generator/kernel_source.hpp"
#include "generator/parallel_compiler.hpp"
#include "runtime/attention_launcher.hpp"
#include "swr/runtime_options.hpp"
#include "swr/sixteen_bit.hpp"
#include "tests/generator/wgmma_variants.hpp"
#include "tests/gpu/attention_layouts.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/random_sixteen_bit.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/reference_attention.hpp"

namespace swr {
namespace {

using testing::Variant;
using testing::wgmma_variants;

using Buffer = DeviceAllocation;
using gpu_test::Storage;
using gpu_test::TensorDims;

using gpu_test::random_elements;

class WgmmaOnGpu : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    SWR_REQUIRE_GPU();
    const auto gpu = detect_present_gpu();
    ASSERT_TRUE(gpu.has_value());
    if (std::string why = instruction_path_problem(*gpu, InstructionPath::wgmma); !why.empty()) {
      GTEST_SKIP() << why;
    }
    gpu_ = *gpu;
  }
  GpuProfile gpu_;
};

// $SWR_CACHE_DIR when set: the sanitizer runs of a device call reuse the first run's cubins.
std::optional<CubinCache> cubin_cache() {
  const char* directory = std::getenv("SWR_CACHE_DIR");
  if (!directory || !*directory) return std::nullopt;
  return CubinCache(directory);
}

// All variants compiled once, in parallel (the device machine has the cores).
const CompiledKernel& compiled(const Variant& variant, const std::string& arch) {
  static std::mutex mutex;
  static std::map<std::string, CompiledKernel> kernels;
  std::lock_guard lock(mutex);
  if (kernels.empty()) {
    std::vector<CompileJob> jobs;
    for (const Variant& v : wgmma_variants()) jobs.push_back({v.problem, v.config, arch});
    const NvrtcCompiler compiler;
    const std::optional<CubinCache> cache = cubin_cache();
    compile_in_parallel(
        compiler, cache ? &*cache : nullptr, jobs,
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency())),
        [&](const CompileResult& result) { kernels[result.source.name] = result.kernel; });
  }
  return kernels.at(render_attention_kernel(variant.problem, variant.config).name);
}

// One problem a variant is checked on: its sizes, mask alignment, the storage of Q and O and of K
// and V ([B, H, S, D] or a [B, S, H, D] projection), and whether persistent variants run with 3
// CTAs (each takes several tiles) or the launcher's wave.
struct Shape {
  int batch, heads, kv_heads, seq_q, seq_kv;
  CausalAlignment align;
  Storage q_storage, kv_storage;
  bool ramped_keys = false;  // gpu_test::ramp_keys
};

// Odd lengths everywhere (masked tails). First the shapes of models: H = 8 query heads over 8, 2
// and 1 K/V heads (H/H_kv = 1, 4, H), BSHD and BHSD storage, the causal diagonal top-left and
// bottom-right with S_q < S_kv, S_q = S_kv and (rows that see no key are 0) S_q > S_kv; then
// multi-head shapes with S_q != S_kv both ways, B > 1, H > 1. The first is the one the sanitizer
// runs take (grouped heads, strided storage and for causal variants the bottom-right shift). Last,
// keys ramped along a multiple of block_n: without the causal mask, the walk of tiles no key mask
// touches; with it, rows that see nearly every key.
std::vector<Shape> shapes(bool causal, int block_n) {
  const CausalAlignment top = CausalAlignment::top_left;
  const CausalAlignment bottom = causal ? CausalAlignment::bottom_right : top;
  std::vector<Shape> list = {
      {1, 8, 2, 130, 333, bottom, Storage::bshd, Storage::bshd},  // GQA 4, prefill over a cache
      {2, 8, 8, 257, 257, top, Storage::bhsd, Storage::bhsd},     // MHA, S_q = S_kv
      {1, 8, 2, 130, 333, top, Storage::bshd, Storage::bhsd},     // GQA 4, S_q < S_kv
      {1, 8, 1, 130, 333, bottom, Storage::bhsd, Storage::bshd},  // MQA
      {2, 8, 2, 257, 257, bottom, Storage::bhsd, Storage::bshd},  // bottom-right = top-left
      {1, 8, 8, 333, 301, top, Storage::bshd, Storage::bshd},     // S_q > S_kv, top-left
      {2, 3, 3, 333, 301, top, Storage::bhsd, Storage::bhsd},
      {1, 2, 2, 257, 511, top, Storage::bhsd, Storage::bhsd},
      {2, 1, 1, 1000, 1000, top, Storage::bhsd, Storage::bhsd},
  };
  // Bottom-right with S_q > S_kv: the first 123 rows see no key (whole Q tiles of them).
  if (causal) list.push_back({1, 8, 2, 200, 77, bottom, Storage::bhsd, Storage::bhsd});
  list.push_back({1, 2, 2, 130, 8 * block_n, bottom, Storage::bhsd, Storage::bhsd, true});
  return list;
}

TEST(WgmmaShapes, CoverEveryRatioStorageAndAlignment) {
  std::set<std::string> seen;
  for (const Shape& s : shapes(true, 128)) {
    seen.insert("ratio" + std::to_string(s.heads / s.kv_heads));
    seen.insert(std::string("q_") + gpu_test::storage_name(s.q_storage));
    seen.insert(std::string("kv_") + gpu_test::storage_name(s.kv_storage));
    const char* order = s.seq_q < s.seq_kv ? "<" : s.seq_q == s.seq_kv ? "=" : ">";
    seen.insert(std::string(to_string(s.align)) + order);
  }
  EXPECT_EQ(seen,
            (std::set<std::string>{"ratio1", "ratio4", "ratio8", "q_bhsd", "q_bshd", "kv_bhsd",
                                   "kv_bshd", "top_left<", "top_left=", "top_left>",
                                   "bottom_right<", "bottom_right=", "bottom_right>"}));
}

TEST_P(WgmmaOnGpu, MatchesReferenceThroughTheLauncher) {
  const Variant variant = wgmma_variants().at(static_cast<std::size_t>(GetParam()));
  const CudaDriver& driver = CudaDriver::get();
  DeviceContext context;
  const CompiledKernel& kernel = compiled(variant, gpu_.arch);
  ASSERT_TRUE(kernel.ok) << kernel.log;
  EXPECT_EQ(kernel.spill_bytes, 0);
  const KernelSource source = render_attention_kernel(variant.problem, variant.config);
  AttentionKernelModule module(driver, kernel.cubin, variant.config, source.dynamic_shared_bytes,
                               gpu_.sm_count);

  const int d = variant.problem.head_dim;
  const DataType dtype = variant.problem.dtype;
  const bool causal = variant.problem.causal;
  // SWR_WGMMA_FIRST_SHAPE_ONLY=1: the first shape only (compute-sanitizer runs, ~100x slower).
  const char* first_only = std::getenv("SWR_WGMMA_FIRST_SHAPE_ONLY");
  std::vector<Shape> list = shapes(causal, variant.config.block_n);
  if (first_only && std::string(first_only) == "1") list.resize(1);
  std::mt19937 rng(std::random_device{}());
  for (const Shape& shape : list) {
    AttentionProblem problem{shape.batch, shape.heads, shape.seq_q, shape.seq_kv, d, dtype, causal};
    problem.kv_heads = shape.kv_heads;
    problem.causal_align = shape.align;
    const TensorDims q_dims{shape.batch, shape.heads, shape.seq_q, d};
    const TensorDims kv_dims{shape.batch, shape.kv_heads, shape.seq_kv, d};
    // Contiguous [B, H, S, D] for the reference, stored as the shape says for the kernel.
    const auto q = random_elements(dtype, q_dims.elements(), rng);
    auto k = random_elements(dtype, kv_dims.elements(), rng);
    if (shape.ramped_keys) gpu_test::ramp_keys(dtype, k, shape.seq_kv, d);
    const auto v = random_elements(dtype, kv_dims.elements(), rng);
    std::vector<double> reference_lse;
    const std::vector<double> reference = reference_attention(problem, q, k, v, &reference_lse);
    const auto stored_q = gpu_test::stored(q, shape.q_storage, q_dims);
    const auto stored_k = gpu_test::stored(k, shape.kv_storage, kv_dims);
    const auto stored_v = gpu_test::stored(v, shape.kv_storage, kv_dims);
    const std::size_t q_bytes = q_dims.elements() * 2, kv_bytes = kv_dims.elements() * 2,
                      lse_bytes = reference_lse.size() * sizeof(float);
    Buffer dq(driver, q_bytes), dk(driver, kv_bytes), dv(driver, kv_bytes),
        dout(driver, q_bytes + 16), counter(driver, sizeof(int)), dlse(driver, lse_bytes);
    SWR_CU(driver, cuMemcpyHtoD(dq.pointer(), stored_q.data(), q_bytes));
    SWR_CU(driver, cuMemcpyHtoD(dk.pointer(), stored_k.data(), kv_bytes));
    SWR_CU(driver, cuMemcpyHtoD(dv.pointer(), stored_v.data(), kv_bytes));
    AttentionBuffers buffers{dq.pointer(), dk.pointer(), dv.pointer(), dout.pointer(),
                             counter.pointer()};
    buffers.q_strides = gpu_test::strides_of(shape.q_storage, q_dims);
    buffers.o_strides = buffers.q_strides;
    buffers.k_strides = gpu_test::strides_of(shape.kv_storage, kv_dims);
    buffers.v_strides = buffers.k_strides;
    // The ramped keys' rows also hand the backward their log-sum-exp (the max P was taken against
    // kept over some tiles and raised in others).
    if (shape.ramped_keys) buffers.lse = dlse.pointer();
    // O 16-byte aligned (written 16 bytes a lane), then only 4-byte aligned (4 bytes a lane).
    for (auto [persistent_ctas, o_offset] : {std::pair{0, 0}, std::pair{3, 0}, std::pair{0, 4}}) {
      if (persistent_ctas && variant.config.persistence == Persistence::grid) continue;
      buffers.o = dout.pointer() + o_offset;
      SWR_CU(driver, cuMemsetD8Async(dout.pointer(), 0xff, q_bytes + 16, nullptr));  // NaN poison
      if (buffers.lse != 0) {
        SWR_CU(driver, cuMemsetD8Async(dlse.pointer(), 0xff, lse_bytes, nullptr));  // NaN poison
      }
      module.launch(problem, buffers, nullptr, persistent_ctas);
      SWR_CU(driver, cuStreamSynchronize(nullptr));
      std::vector<std::uint16_t> out(q_dims.elements());
      SWR_CU(driver, cuMemcpyDtoH(out.data(), buffers.o, q_bytes));
      const OutputComparison result = compare_with_reference(
          problem, gpu_test::gathered(out, shape.q_storage, q_dims), reference);
      EXPECT_TRUE(result.passes(relative_error_tolerance(dtype)))
          << variant.config.key() << " " << problem.key() << " Q/O "
          << gpu_test::storage_name(shape.q_storage) << " K/V "
          << gpu_test::storage_name(shape.kv_storage) << " persistent_ctas " << persistent_ctas
          << " O at +" << o_offset << " bytes"
          << ": relative error " << result.relative_error << ", non-finite " << result.non_finite;
      if (buffers.lse != 0) {
        std::vector<float> lse(reference_lse.size());
        SWR_CU(driver, cuMemcpyDtoH(lse.data(), buffers.lse, lse.size() * 4));
        EXPECT_LT(log_sum_exp_error(lse, reference_lse), 1e-3)
            << variant.config.key() << " " << problem.key() << " persistent_ctas "
            << persistent_ctas;
      }
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<int>& info) {
  const Variant variant = wgmma_variants().at(static_cast<std::size_t>(info.param));
  std::string name = variant.config.key() + "_d" + std::to_string(variant.problem.head_dim) + "_" +
                     std::string(to_string(variant.problem.dtype)) +
                     (variant.problem.causal ? "_causal" : "");
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryKnob, WgmmaOnGpu,
                         ::testing::Range(0, static_cast<int>(wgmma_variants().size())), case_name);

class WgmmaLaunch : public WgmmaOnGpu {};

TEST_F(WgmmaLaunch, MapsAreEncodedOncePerShapeAndStridesAndBadLayoutsRefused) {
  const Variant variant = wgmma_variants().front();
  const CudaDriver& driver = CudaDriver::get();
  DeviceContext context;
  const CompiledKernel& kernel = compiled(variant, gpu_.arch);
  ASSERT_TRUE(kernel.ok) << kernel.log;
  const KernelSource source = render_attention_kernel(variant.problem, variant.config);
  AttentionKernelModule module(driver, kernel.cubin, variant.config, source.dynamic_shared_bytes,
                               gpu_.sm_count);
  const AttentionProblem problem{1,    2, 300, 300, variant.problem.head_dim, variant.problem.dtype,
                                 false};
  const std::size_t bytes = static_cast<std::size_t>(2) * 300 * problem.head_dim * 2 + 256;
  Buffer a(driver, bytes), b(driver, bytes), c(driver, bytes), o(driver, bytes);
  SWR_CU(driver, cuMemsetD8Async(a.pointer(), 0, bytes, nullptr));
  for (int i = 0; i < 3; ++i)
    module.launch(problem, {a.pointer(), a.pointer(), a.pointer(), o.pointer(), 0}, nullptr);
  EXPECT_EQ(module.tensor_map_encodings(), 1);
  module.launch(problem, {b.pointer(), c.pointer(), a.pointer(), o.pointer(), 0}, nullptr);
  EXPECT_EQ(module.tensor_map_encodings(), 1);  // retargeted
  AttentionProblem longer = problem;
  longer.seq_kv = 200;
  module.launch(longer, {b.pointer(), c.pointer(), a.pointer(), o.pointer(), 0}, nullptr);
  EXPECT_EQ(module.tensor_map_encodings(), 2);
  SWR_CU(driver, cuStreamSynchronize(nullptr));
  try {
    module.launch(problem, {a.pointer() + 2, b.pointer(), c.pointer(), o.pointer(), 0}, nullptr);
    ADD_FAILURE() << "a misaligned Q was launched";
  } catch (const KernelRefused& refused) {
    EXPECT_NE(std::string(refused.what()).find("Q: base address"), std::string::npos)
        << refused.what();
    EXPECT_NE(std::string(refused.what()).find("is not 16-byte aligned"), std::string::npos);
  }
  // Other strides for the same shape (Q as a [B, S, H, D] projection): encoded once more, and not
  // again for the same strides.
  const long long d = problem.head_dim;
  AttentionBuffers strided{b.pointer(), c.pointer(), a.pointer(), o.pointer(), 0};
  strided.q_strides = {300 * 2 * d, d, 2 * d, 1};
  module.launch(problem, strided, nullptr);
  module.launch(problem, strided, nullptr);
  EXPECT_EQ(module.tensor_map_encodings(), 3);
  SWR_CU(driver, cuStreamSynchronize(nullptr));
  // A K row stride TMA cannot take, and an O the 4-byte stores cannot: refused before launching.
  AttentionBuffers bad_k = strided;
  bad_k.k_strides = {2 * 300 * (d + 1), 300 * (d + 1), d + 1, 1};
  AttentionBuffers bad_o = strided;
  bad_o.o += 2;
  for (const auto& [buffers, expected] :
       {std::pair{bad_k, std::string("K: row stride of ") + std::to_string(2 * (d + 1)) +
                             " bytes is not a multiple of 16"},
        std::pair{bad_o, std::string("is not 4-byte aligned, which the kernel's 4-byte stores")}}) {
    try {
      module.launch(problem, buffers, nullptr);
      ADD_FAILURE() << "launched: " << expected;
    } catch (const KernelRefused& refused) {
      EXPECT_NE(std::string(refused.what()).find(expected), std::string::npos) << refused.what();
    }
  }
}

// A new knob value is worth its place only if it is faster somewhere: each against its twin (the
// same variant with the knob at its old value), same inputs, launches interleaved round by round
// (rotating the order), device events around each, medians. K/V of one head are 4 MiB and all
// heads 128 MiB each: the L2 (60 MiB) holds neither tensor, so every launch starts alike.
// Outputs are checked against the first variant's (checked against the fp64 reference above).
TEST_F(WgmmaLaunch, NewKnobsAgainstTheirTwinsInterleaved) {
  const char* wanted = std::getenv("SWR_WGMMA_TWIN_TIMING");
  if (!wanted || std::string(wanted) != "1") GTEST_SKIP() << "set SWR_WGMMA_TWIN_TIMING=1";
  // Groups: the first of each is the twin the others are divided by.
  const std::vector<std::vector<std::string>> groups = {
      {"wgmma-m128n128s2-ov-pp-cyclic-grid-head_major",
       "wgmma-m128n128s2-ov-pp-cyclic-static-head_major",
       "wgmma-m128n128s2-ov-pp-cyclic-dynamic-head_major",
       "wgmma-m128n128s2-ov-pp-psm-cyclic-grid-head_major"},
      {"wgmma-m192n128s2-cyclic-grid-head_major", "wgmma-m192n128s2-cyclic-static-head_major",
       "wgmma-m192n128s2-cyclic-dynamic-head_major",
       "wgmma-m192n128s2-psm-cyclic-grid-head_major"}};
  const CudaDriver& driver = CudaDriver::get();
  DeviceContext context;
  std::mt19937 rng(std::random_device{}());
  for (bool causal : {false, true}) {
    const AttentionProblem problem{2, 16, 16384, 16384, 128, DataType::f16, causal};
    std::vector<AttentionConfig> configs;
    for (const auto& group : groups)
      for (const std::string& key : group) configs.push_back(*AttentionConfig::from_key(key));
    std::vector<CompileJob> jobs;
    for (const AttentionConfig& config : configs) jobs.push_back({problem, config, gpu_.arch});
    std::map<std::string, CompiledKernel> kernels;
    const NvrtcCompiler compiler;
    const std::optional<CubinCache> cache = cubin_cache();
    compile_in_parallel(compiler, cache ? &*cache : nullptr, jobs,
                        static_cast<int>(std::max(1u, std::thread::hardware_concurrency())),
                        [&](const CompileResult& r) { kernels[r.source.name] = r.kernel; });
    std::vector<std::unique_ptr<AttentionKernelModule>> modules;
    for (const AttentionConfig& config : configs) {
      const KernelSource source = render_attention_kernel(problem, config);
      const CompiledKernel& kernel = kernels.at(source.name);
      ASSERT_TRUE(kernel.ok) << kernel.log;
      EXPECT_EQ(kernel.spill_bytes, 0) << config.key();
      modules.push_back(std::make_unique<AttentionKernelModule>(
          driver, kernel.cubin, config, source.dynamic_shared_bytes, gpu_.sm_count));
    }
    const std::size_t count =
        static_cast<std::size_t>(problem.batch) * problem.heads * problem.seq_q * problem.head_dim;
    const auto q = random_elements(DataType::f16, count, rng);
    const auto k = random_elements(DataType::f16, count, rng);
    const auto v = random_elements(DataType::f16, count, rng);
    Buffer dq(driver, count * 2), dk(driver, count * 2), dv(driver, count * 2),
        counter(driver, sizeof(int));
    SWR_CU(driver, cuMemcpyHtoD(dq.pointer(), q.data(), count * 2));
    SWR_CU(driver, cuMemcpyHtoD(dk.pointer(), k.data(), count * 2));
    SWR_CU(driver, cuMemcpyHtoD(dv.pointer(), v.data(), count * 2));
    std::vector<std::unique_ptr<Buffer>> outputs;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      outputs.push_back(std::make_unique<Buffer>(driver, count * 2));
      SWR_CU(driver, cuMemsetD8Async(outputs[i]->pointer(), 0xff, count * 2, nullptr));
    }
    auto launch = [&](std::size_t i) {
      modules[i]->launch(
          problem,
          {dq.pointer(), dk.pointer(), dv.pointer(), outputs[i]->pointer(), counter.pointer()},
          nullptr);
    };
    for (int warm = 0; warm < 2; ++warm)
      for (std::size_t i = 0; i < configs.size(); ++i) launch(i);
    SWR_CU(driver, cuStreamSynchronize(nullptr));

    // Same function: every output against the first's (itself checked on odd shapes above).
    std::vector<std::uint16_t> first(count), other(count);
    SWR_CU(driver, cuMemcpyDtoH(first.data(), outputs[0]->pointer(), count * 2));
    std::vector<double> first_values(count);
    for (std::size_t e = 0; e < count; ++e)
      first_values[e] = element_to_float(DataType::f16, first[e]);
    for (std::size_t i = 1; i < configs.size(); ++i) {
      SWR_CU(driver, cuMemcpyDtoH(other.data(), outputs[i]->pointer(), count * 2));
      const OutputComparison same = compare_with_reference(problem, other, first_values);
      EXPECT_TRUE(same.passes(relative_error_tolerance(DataType::f16)))
          << configs[i].key() << " vs " << configs[0].key() << ": " << same.relative_error
          << ", non-finite " << same.non_finite;
    }

    constexpr int kRounds = 15;
    std::vector<std::vector<float>> times(configs.size());
    CUevent start = nullptr, stop = nullptr;
    SWR_CU(driver, cuEventCreate(&start, CU_EVENT_DEFAULT));
    SWR_CU(driver, cuEventCreate(&stop, CU_EVENT_DEFAULT));
    for (int round = 0; round < kRounds; ++round) {
      for (std::size_t j = 0; j < configs.size(); ++j) {
        const std::size_t i = (j + round) % configs.size();
        SWR_CU(driver, cuEventRecord(start, nullptr));
        launch(i);
        SWR_CU(driver, cuEventRecord(stop, nullptr));
        SWR_CU(driver, cuEventSynchronize(stop));
        float ms = 0;
        SWR_CU(driver, cuEventElapsedTime(&ms, start, stop));
        times[i].push_back(ms);
      }
    }
    SWR_CU(driver, cuEventDestroy(start));
    SWR_CU(driver, cuEventDestroy(stop));
    // Multiply-adds of QK^T and PV over the visible (query, key) pairs, 2 flops each.
    const double pairs =
        causal ? 0.5 * problem.seq_q * (problem.seq_q + 1.0) : 1.0 * problem.seq_q * problem.seq_kv;
    const double flops = 4.0 * problem.batch * problem.heads * problem.head_dim * pairs;
    std::printf("twin timing %s (%s, %d interleaved rounds, medians):\n", problem.key().c_str(),
                gpu_.name.c_str(), kRounds);
    std::size_t index = 0;
    for (const auto& group : groups) {
      double twin = 0;
      for (std::size_t g = 0; g < group.size(); ++g, ++index) {
        std::vector<float> sorted = times[index];
        std::sort(sorted.begin(), sorted.end());
        const double median = sorted[sorted.size() / 2];
        if (g == 0) twin = median;
        std::printf("  %-52s %8.3f ms  min %8.3f  max %8.3f  %6.1f TFLOP/s  twin/this %.3f\n",
                    configs[index].key().c_str(), median, sorted.front(), sorted.back(),
                    flops / median * 1e-9, twin / median);
      }
    }
  }
}

}  // namespace
}  // namespace swr
