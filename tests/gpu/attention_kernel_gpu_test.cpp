// The attention kernels, compiled with NVRTC for the present GPU and launched through the runtime
// launcher, against the double-precision CPU reference on fresh random inputs with a poisoned
// output: every knob value of the mma_sync template, every head dim (32 to 256) in fp16 and bf16,
// and for each the shapes real models give it: grouped K/V heads (H/H_kv of 1, 4 and H), Q, K,
// V and O stored as [B, H, S, D] or as [B, S, H, D] projections, causal masks aligned top-left
// and bottom-right with S_q < S_kv, S_q = S_kv and S_q > S_kv (rows that see no key are 0), odd
// lengths. A case is a compiled variant; every case runs every shape of model_shapes(). A case
// whose variant does not fit the present GPU is skipped, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
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
#include "generator/nvrtc_compiler.hpp"
#include "generator/parallel_compiler.hpp"
#include "generator/resource_model.hpp"
#include "runtime/attention_launcher.hpp"
#include "swr/attention_config.hpp"
#include "swr/sixteen_bit.hpp"
#include "tests/gpu/attention_layouts.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/random_sixteen_bit.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/reference_attention.hpp"

namespace swr {
namespace {

using gpu_test::Storage;
using gpu_test::TensorDims;

struct KernelCase {
  AttentionConfig config;
  int head_dim;
  DataType dtype;
  bool causal;
};

// A config by its key (a typo throws while the cases are listed).
AttentionConfig config_named(const std::string& key) {
  return AttentionConfig::from_key(key).value();
}

// Each mma_sync knob takes each of its values at least once; the moduli differ so the values mix.
std::vector<KernelCase> knob_cases() {
  const AttentionConfig tiles[] = {
      {64, 64, 4}, {128, 64, 4}, {128, 64, 8}, {128, 128, 8}, {64, 128, 4}};
  const Persistence persistences[] = {Persistence::grid, Persistence::static_loop,
                                      Persistence::dynamic};
  const TileSwizzle swizzles[] = {TileSwizzle::head_major, TileSwizzle::heads_interleaved,
                                  TileSwizzle::head_groups};
  std::vector<KernelCase> cases;
  for (int i = 0; i < 12; ++i) {
    KernelCase c;
    c.config = tiles[i % 5];
    c.config.stages = 1 + i % 3;
    c.config.order = i % 2 ? KvOrder::sawtooth : KvOrder::cyclic;
    c.config.persistence = persistences[(i / 2) % 3];
    c.config.swizzle = swizzles[(i / 3) % 3];
    c.config.head_group = c.config.swizzle == TileSwizzle::head_groups ? (i % 2 ? 2 : 4) : 1;
    c.head_dim = (i % 4) < 2 ? 64 : 128;
    c.dtype = (i % 7) % 2 ? DataType::bf16 : DataType::f16;
    c.causal = (i % 5) % 2 == 1 || i == 0;
    cases.push_back(c);
  }
  return cases;
}

// The head dims beyond 64 and 128, each in fp16 (causal) and bf16 (not), on tiles their space
// keeps (the 32-row K/V tiles of the large heads among them), schedules mixed.
std::vector<KernelCase> head_dim_cases() {
  struct Pair {
    int head_dim;
    const char* f16_causal;
    const char* bf16;
  };
  const Pair pairs[] = {
      {32, "m128n128w8s2-sawtooth-dynamic-groups4", "m64n64w4s3-cyclic-static-heads_interleaved"},
      {80, "m128n64w4s2-cyclic-grid-head_major", "m64n128w4s1-sawtooth-static-groups4"},
      {96, "m64n64w4s2-cyclic-dynamic-head_major", "m128n128w8s1-cyclic-grid-heads_interleaved"},
      {160, "m128n64w8s2-sawtooth-static-groups4", "m64n32w4s3-cyclic-dynamic-head_major"},
      {192, "m64n64w4s1-cyclic-grid-head_major", "m128n32w8s2-sawtooth-dynamic-heads_interleaved"},
      {256, "m64n32w4s2-cyclic-static-head_major", "m128n64w8s1-sawtooth-grid-groups4"},
  };
  std::vector<KernelCase> cases;
  for (const Pair& pair : pairs) {
    cases.push_back({config_named(pair.f16_causal), pair.head_dim, DataType::f16, true});
    cases.push_back({config_named(pair.bf16), pair.head_dim, DataType::bf16, false});
  }
  return cases;
}

// Every case of this file. The wgmma path adds its cases here: the shapes and checks are the same.
std::vector<KernelCase> all_cases() {
  std::vector<KernelCase> cases = knob_cases();
  for (const KernelCase& c : head_dim_cases()) cases.push_back(c);
  return cases;
}

// One problem of a case: its sizes, mask alignment, storage of Q/O and of K/V, and how many CTAs
// a persistent variant gets (3: every CTA takes several tiles; 0: the launcher's wave).
struct ModelShape {
  int batch, heads, kv_heads, seq_q, seq_kv;
  CausalAlignment align;
  Storage q_storage, kv_storage;
  int persistent_ctas;
  bool ramped_keys = false;  // gpu_test::ramp_keys
};

// H = 8 query heads over 8, 2 and 1 K/V heads (H/H_kv = 1, 4, H), odd lengths; last, keys ramped
// along a multiple of block_n (with the causal mask, rows that see nearly every key).
std::vector<ModelShape> model_shapes(bool causal, int block_n) {
  const CausalAlignment top = CausalAlignment::top_left;
  const CausalAlignment bottom = causal ? CausalAlignment::bottom_right : top;
  std::vector<ModelShape> shapes = {
      {2, 8, 8, 257, 257, top, Storage::bhsd, Storage::bhsd, 0},     // MHA, S_q = S_kv
      {1, 8, 2, 130, 333, top, Storage::bshd, Storage::bhsd, 3},     // GQA 4, S_q < S_kv
      {1, 8, 1, 130, 333, bottom, Storage::bshd, Storage::bshd, 0},  // MQA, prefill over a cache
      {2, 8, 2, 257, 257, bottom, Storage::bhsd, Storage::bshd, 3},  // bottom-right = top-left
      {1, 8, 8, 333, 301, top, Storage::bshd, Storage::bshd, 0},     // S_q > S_kv, top-left
  };
  // Bottom-right with S_q > S_kv: the first 123 rows see no key.
  if (causal) shapes.push_back({1, 8, 2, 200, 77, bottom, Storage::bhsd, Storage::bhsd, 3});
  shapes.push_back({1, 2, 2, 130, 8 * block_n, bottom, Storage::bhsd, Storage::bhsd, 3, true});
  return shapes;
}

void PrintTo(const KernelCase& c, std::ostream* out) {
  *out << c.config.key() << " d" << c.head_dim << " " << to_string(c.dtype)
       << (c.causal ? " causal" : "");
}

std::string case_name(const testing::TestParamInfo<KernelCase>& info) {
  std::string name = info.param.config.key() + "_d" + std::to_string(info.param.head_dim) + "_" +
                     std::string(to_string(info.param.dtype)) +
                     (info.param.causal ? "_causal" : "");
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

TEST(AttentionKernelCases, CoverEveryKnobValueAndHeadDim) {
  std::set<std::string> seen;
  for (const KernelCase& c : all_cases()) {
    seen.insert("tile" + std::to_string(c.config.block_m) + "x" + std::to_string(c.config.block_n) +
                "w" + std::to_string(c.config.warps));
    seen.insert("stages" + std::to_string(c.config.stages));
    seen.insert(std::string(to_string(c.config.order)));
    seen.insert(std::string(to_string(c.config.persistence)));
    seen.insert(std::string(to_string(c.config.swizzle)));
    seen.insert("d" + std::to_string(c.head_dim) + std::string(to_string(c.dtype)));
    seen.insert(c.causal ? "causal" : "non-causal");
  }
  std::set<std::string> expected = {"tile64x64w4",
                                    "tile128x64w4",
                                    "tile128x64w8",
                                    "tile128x128w8",
                                    "tile64x128w4",
                                    "tile64x32w4",
                                    "tile128x32w8",
                                    "stages1",
                                    "stages2",
                                    "stages3",
                                    "cyclic",
                                    "sawtooth",
                                    "grid",
                                    "static",
                                    "dynamic",
                                    "head_major",
                                    "head_groups",
                                    "causal",
                                    "heads_interleaved",
                                    "non-causal"};
  for (int dim : kSupportedHeadDims) {
    for (const char* dtype : {"f16", "bf16"}) expected.insert("d" + std::to_string(dim) + dtype);
  }
  for (const std::string& value : expected) EXPECT_TRUE(seen.count(value)) << value;
  // Every ratio, storage and alignment, with S_q below, equal to and above S_kv.
  std::set<std::string> shapes;
  for (const ModelShape& s : model_shapes(true, 64)) {
    shapes.insert("ratio" + std::to_string(s.heads / s.kv_heads));
    shapes.insert(gpu_test::storage_name(s.q_storage));
    shapes.insert(gpu_test::storage_name(s.kv_storage));
    const char* order = s.seq_q < s.seq_kv ? "<" : s.seq_q == s.seq_kv ? "=" : ">";
    shapes.insert(std::string(to_string(s.align)) + order);
  }
  EXPECT_EQ(shapes, (std::set<std::string>{"ratio1", "ratio4", "ratio8", "bhsd", "bshd",
                                           "top_left<", "top_left=", "top_left>", "bottom_right<",
                                           "bottom_right=", "bottom_right>"}));
}

class AttentionKernelOnGpu : public testing::TestWithParam<KernelCase> {
 protected:
  void SetUp() override { SWR_REQUIRE_GPU(); }
};

// The problem a case's kernel is compiled for: only its head dim, dtype and mask are compiled in.
AttentionProblem compiled_problem(const KernelCase& c) {
  return {1, 8, 257, 257, c.head_dim, c.dtype, c.causal};
}

// Every case that fits the GPU compiled once, in parallel (the device machine has the cores),
// through $SWR_CACHE_DIR's cubin cache when it is set.
const CompiledKernel& compiled(const KernelCase& c, const GpuProfile& gpu) {
  static std::mutex mutex;
  static std::map<std::string, CompiledKernel> kernels;
  std::lock_guard lock(mutex);
  if (kernels.empty()) {
    std::vector<CompileJob> jobs;
    for (const KernelCase& other : all_cases()) {
      const AttentionProblem problem = compiled_problem(other);
      if (attention_resource_use(problem, other.config, gpu).does_not_fit.empty()) {
        jobs.push_back({problem, other.config, gpu.arch});
      }
    }
    const char* directory = std::getenv("SWR_CACHE_DIR");
    const std::optional<CubinCache> cache =
        directory && *directory ? std::optional<CubinCache>(CubinCache(directory)) : std::nullopt;
    compile_in_parallel(
        NvrtcCompiler(), cache ? &*cache : nullptr, jobs,
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency())),
        [&](const CompileResult& result) { kernels[result.source.name] = result.kernel; });
  }
  return kernels.at(render_attention_kernel(compiled_problem(c), c.config).name);
}

using gpu_test::random_elements;

TEST_P(AttentionKernelOnGpu, MatchesReferenceOnModelShapes) {
  const KernelCase& c = GetParam();
  const CudaDriver& driver = CudaDriver::get();
  DeviceContext context;
  const auto gpu = detect_present_gpu();
  ASSERT_TRUE(gpu.has_value());

  const std::vector<ModelShape> shapes = model_shapes(c.causal, c.config.block_n);
  const AttentionProblem first = compiled_problem(c);
  if (std::string why = attention_resource_use(first, c.config, *gpu).does_not_fit; !why.empty()) {
    GTEST_SKIP() << c.config.key() << " d" << c.head_dim << " does not fit " << gpu->name << ": "
                 << why;
  }
  const KernelSource source = render_attention_kernel(first, c.config);
  const CompiledKernel& kernel = compiled(c, *gpu);
  ASSERT_TRUE(kernel.ok) << kernel.log;
  AttentionKernelModule module(driver, kernel.cubin, c.config, source.dynamic_shared_bytes,
                               gpu->sm_count);

  std::mt19937 rng(std::random_device{}());  // fresh inputs every run
  for (const ModelShape& shape : shapes) {
    AttentionProblem problem{shape.batch, shape.heads, shape.seq_q, shape.seq_kv,
                             c.head_dim,  c.dtype,     c.causal};
    problem.kv_heads = shape.kv_heads;
    problem.causal_align = shape.align;
    const TensorDims q_dims{shape.batch, shape.heads, shape.seq_q, c.head_dim};
    const TensorDims kv_dims{shape.batch, shape.kv_heads, shape.seq_kv, c.head_dim};
    const auto q = random_elements(c.dtype, q_dims.elements(), rng);
    auto k = random_elements(c.dtype, kv_dims.elements(), rng);
    if (shape.ramped_keys) gpu_test::ramp_keys(c.dtype, k, shape.seq_kv, c.head_dim);
    const auto v = random_elements(c.dtype, kv_dims.elements(), rng);
    const std::size_t lse_bytes = q_dims.elements() / c.head_dim * sizeof(float);
    DeviceAllocation dq(driver, q_dims.elements() * 2), dk(driver, kv_dims.elements() * 2),
        dv(driver, kv_dims.elements() * 2), dout(driver, q_dims.elements() * 2),
        counter(driver, sizeof(int)), dlse(driver, lse_bytes);
    const auto upload = [&](const DeviceAllocation& to, const std::vector<std::uint16_t>& values,
                            Storage storage, const TensorDims& dims) {
      const std::vector<std::uint16_t> laid = gpu_test::stored(values, storage, dims);
      SWR_CU(driver, cuMemcpyHtoD(to.pointer(), laid.data(), laid.size() * 2));
    };
    upload(dq, q, shape.q_storage, q_dims);
    upload(dk, k, shape.kv_storage, kv_dims);
    upload(dv, v, shape.kv_storage, kv_dims);
    SWR_CU(driver, cuMemsetD8Async(dout.pointer(), 0xff, q_dims.elements() * 2, nullptr));  // NaN

    AttentionBuffers buffers{dq.pointer(), dk.pointer(), dv.pointer(), dout.pointer(),
                             counter.pointer()};
    buffers.q_strides = buffers.o_strides = gpu_test::strides_of(shape.q_storage, q_dims);
    buffers.k_strides = buffers.v_strides = gpu_test::strides_of(shape.kv_storage, kv_dims);
    // The ramped keys' rows also hand the backward their log-sum-exp (the max P was taken against
    // kept over some tiles and raised in others).
    if (shape.ramped_keys) {
      buffers.lse = dlse.pointer();
      SWR_CU(driver, cuMemsetD8Async(dlse.pointer(), 0xff, lse_bytes, nullptr));  // NaN
    }
    const int ctas = c.config.persistence == Persistence::grid ? 0 : shape.persistent_ctas;
    module.launch(problem, buffers, nullptr, ctas);
    SWR_CU(driver, cuStreamSynchronize(nullptr));
    std::vector<std::uint16_t> laid(q_dims.elements());
    SWR_CU(driver, cuMemcpyDtoH(laid.data(), dout.pointer(), laid.size() * 2));
    const std::vector<std::uint16_t> out = gpu_test::gathered(laid, shape.q_storage, q_dims);

    std::vector<double> reference_lse;
    const OutputComparison result =
        compare_with_reference(problem, out, reference_attention(problem, q, k, v, &reference_lse));
    EXPECT_TRUE(result.passes(relative_error_tolerance(c.dtype)))
        << problem.key() << " Q/O " << gpu_test::storage_name(shape.q_storage) << ", K/V "
        << gpu_test::storage_name(shape.kv_storage) << ", persistent_ctas " << ctas
        << ": relative error " << result.relative_error << ", non-finite " << result.non_finite;
    if (buffers.lse != 0) {
      std::vector<float> lse(reference_lse.size());
      SWR_CU(driver, cuMemcpyDtoH(lse.data(), buffers.lse, lse.size() * 4));
      EXPECT_LT(log_sum_exp_error(lse, reference_lse), 1e-3) << problem.key();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKnobAndHeadDim, AttentionKernelOnGpu, testing::ValuesIn(all_cases()),
                         case_name);

}  // namespace
}  // namespace swr
