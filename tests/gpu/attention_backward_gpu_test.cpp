// The attention backward, compiled with NVRTC for the present GPU and launched through the runtime
// launcher after the forward (which writes O and, asked to, the log-sum-exp), against the
// double-precision CPU reference on fresh random inputs, the gradients' outputs poisoned (NaN)
// first: every knob value of the mma_sync backward and of the wgmma one (sm_90a), head dims 32 to
// 256 in fp16 and bf16, on the shapes models give it (multi-head, GQA 4, MQA; Q/O/dO/dQ and
// K/V/dK/dV stored [B, H, S, D] or as [B, S, H, D] projections; causal top-left and bottom-right
// with S_q below, at and above S_kv, rows that see no key; odd lengths; persistent grids of 3 CTAs
// so each takes several tiles). The forward's log-sum-exp is checked against the reference's too,
// and the deterministic mode's dQ is the same bit for bit over two runs. A case whose variant does
// not fit the GPU is skipped, saying why.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
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
#include "generator/attention_backward/attention_backward_family.hpp"
#include "generator/cubin_cache.hpp"
#include "generator/kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/parallel_compiler.hpp"
#include "runtime/attention_backward/backward_launcher.hpp"
#include "runtime/attention_launcher.hpp"
#include "tests/gpu/attention_layouts.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/random_sixteen_bit.hpp"
#include "tuner/attention_backward/reference_backward.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/reference_attention.hpp"

namespace swr {
namespace {

using gpu_test::Storage;
using gpu_test::TensorDims;

struct BackwardCase {
  AttentionBackwardConfig config;
  int head_dim;
  DataType dtype;
  bool causal;
};

AttentionBackwardConfig config_named(const std::string& key) {
  return AttentionBackwardConfig::from_key(key).value();
}

// Each knob takes each of its values at least once; the moduli differ so the values mix. Each tile
// runs at a head dim its registers take (the 8-warp 64-row tiles split the columns above 128).
std::vector<BackwardCase> knob_cases() {
  struct Tile {
    int block_m, block_n, warps, head_dim;
  };
  const Tile tiles[] = {{64, 128, 8, 64}, {32, 128, 8, 128}, {64, 64, 4, 64},   {64, 64, 8, 160},
                        {32, 64, 4, 128}, {128, 64, 4, 32},  {128, 128, 8, 32}, {32, 64, 8, 256}};
  const Persistence persistences[] = {Persistence::grid, Persistence::static_loop,
                                      Persistence::dynamic};
  const TileSwizzle swizzles[] = {TileSwizzle::head_major, TileSwizzle::heads_interleaved,
                                  TileSwizzle::head_groups};
  std::vector<BackwardCase> cases;
  for (int i = 0; i < 16; ++i) {
    BackwardCase c;
    const Tile& tile = tiles[i % 8];
    c.config.block_m = tile.block_m;
    c.config.block_n = tile.block_n;
    c.config.warps = tile.warps;
    c.config.stages = 1 + i % 3;
    c.config.order = i % 2 ? KvOrder::sawtooth : KvOrder::cyclic;
    c.config.persistence = persistences[(i / 2) % 3];
    c.config.swizzle = swizzles[(i / 3) % 3];
    c.config.head_group = c.config.swizzle == TileSwizzle::head_groups ? (i % 2 ? 2 : 3) : 1;
    c.config.dq = (i / 4) % 2 ? DqAccumulation::deterministic : DqAccumulation::atomic;
    c.head_dim = tile.head_dim;
    c.dtype = (i % 7) % 2 ? DataType::bf16 : DataType::f16;
    c.causal = (i % 3) != 1;
    cases.push_back(c);
  }
  return cases;
}

// The other head dims, each in fp16 (causal) and bf16 (not), on tiles their registers allow.
std::vector<BackwardCase> head_dim_cases() {
  struct Pair {
    int head_dim;
    const char* f16_causal;
    const char* bf16;
  };
  const Pair pairs[] = {
      {32, "bwd-m64n128w8s2-sawtooth-dynamic-head_major-det",
       "bwd-m128n64w4s1-cyclic-grid-groups2"},
      {80, "bwd-m64n64w4s2-cyclic-static-head_major",
       "bwd-m64n64w4s3-sawtooth-grid-heads_interleaved"},
      {96, "bwd-m32n64w4s2-cyclic-grid-heads_interleaved",
       "bwd-m32n128w8s2-cyclic-dynamic-head_major-det"},
      {160, "bwd-m64n64w8s2-sawtooth-static-head_major", "bwd-m64n64w8s1-cyclic-grid-head_major"},
      {192, "bwd-m32n32w4s2-cyclic-grid-head_major-det", "bwd-m32n64w8s2-sawtooth-dynamic-groups2"},
      {256, "bwd-m32n64w8s2-cyclic-grid-head_major",
       "bwd-m32n64w8s1-sawtooth-static-head_major-det"},
  };
  std::vector<BackwardCase> cases;
  for (const Pair& pair : pairs) {
    cases.push_back({config_named(pair.f16_causal), pair.head_dim, DataType::f16, true});
    cases.push_back({config_named(pair.bf16), pair.head_dim, DataType::bf16, false});
  }
  return cases;
}

// The wgmma kernels (sm_90a; skipped elsewhere as not fitting): every knob value on their tiles
// (64 and 80 Q rows a step at head dim 128, 128 at head dim 64, the wide-head kernel's 64 x 64 at
// 256), both dtypes, causal and not.
std::vector<BackwardCase> wgmma_cases() {
  const DataType f16 = DataType::f16;
  const DataType bf16 = DataType::bf16;
  return {
      {config_named("bwd-wgmma-m64n128w8s2-cyclic-grid-head_major"), 128, f16, true},
      {config_named("bwd-wgmma-m64n128w8s3-sawtooth-static-heads_interleaved"), 128, bf16, false},
      {config_named("bwd-wgmma-m64n128w8s1-sawtooth-dynamic-groups2-det"), 128, f16, false},
      {config_named("bwd-wgmma-m64n128w8s2-sawtooth-grid-head_major"), 128, bf16, true},
      {config_named("bwd-wgmma-m128n128w8s2-sawtooth-grid-head_major-det"), 64, bf16, true},
      {config_named("bwd-wgmma-m128n128w8s3-cyclic-dynamic-head_major"), 64, f16, true},
      {config_named("bwd-wgmma-m128n128w8s1-cyclic-static-groups3"), 64, bf16, false},
      // The warp-specialized kernel (12 warps: a producer warpgroup, two consumer warpgroups).
      {config_named("bwd-wgmma-m64n128w12s2-cyclic-grid-head_major"), 128, f16, true},
      {config_named("bwd-wgmma-m64n128w12s2-sawtooth-static-heads_interleaved"), 128, bf16, false},
      {config_named("bwd-wgmma-m64n128w12s2-sawtooth-dynamic-groups2-det"), 128, f16, false},
      {config_named("bwd-wgmma-m64n128w12s3-cyclic-static-head_major-det"), 128, bf16, true},
      {config_named("bwd-wgmma-m128n128w12s2-sawtooth-grid-head_major-det"), 64, bf16, true},
      {config_named("bwd-wgmma-m128n128w12s2-cyclic-dynamic-head_major"), 64, f16, true},
      {config_named("bwd-wgmma-m128n128w12s2-cyclic-static-groups3"), 64, bf16, false},
      // Its lagged consumers (each computes the last step's dQ; no barrier a step).
      {config_named("bwd-wgmma-m64n128w12s2-cyclic-grid-head_major-lag"), 128, bf16, true},
      {config_named("bwd-wgmma-m64n128w12s2-sawtooth-dynamic-groups2-lag-det"), 128, f16, false},
      {config_named("bwd-wgmma-m64n128w12s3-sawtooth-static-heads_interleaved-lag"), 128, bf16,
       false},
      {config_named("bwd-wgmma-m128n128w12s2-cyclic-dynamic-head_major-lag"), 64, bf16, true},
      {config_named("bwd-wgmma-m128n128w12s2-sawtooth-static-groups3-lag-det"), 64, f16, true},
      {config_named("bwd-wgmma-m128n128w12s2-cyclic-grid-heads_interleaved-lag"), 64, f16, false},
      // 80 Q rows a step at head dim 128 (dQ transposed, dS stored K-major), both syncs.
      {config_named("bwd-wgmma-m80n128w12s2-cyclic-grid-head_major"), 128, bf16, false},
      {config_named("bwd-wgmma-m80n128w12s2-sawtooth-dynamic-groups2-det"), 128, f16, true},
      {config_named("bwd-wgmma-m80n128w12s2-cyclic-static-head_major-lag"), 128, bf16, true},
      {config_named("bwd-wgmma-m80n128w12s2-sawtooth-grid-heads_interleaved-lag-det"), 128, f16,
       false},
      // CTA pairs (clusters of two CTAs on neighbouring K/V tiles, Q and dO multicast): every tile,
      // both syncs, each swizzle, causal and not; the shapes' odd K/V tile counts leave a pair's
      // second CTA past the last tile.
      {config_named("bwd-wgmma-m64n128w12s2-cyclic-grid-head_major-pair"), 128, f16, true},
      {config_named("bwd-wgmma-m64n128w12s2-sawtooth-grid-groups2-pair-lag"), 128, bf16, true},
      {config_named("bwd-wgmma-m128n128w12s2-sawtooth-grid-heads_interleaved-pair"), 64, bf16,
       false},
      {config_named("bwd-wgmma-m128n128w12s2-cyclic-grid-head_major-pair-lag"), 64, f16, true},
      {config_named("bwd-wgmma-m80n128w12s2-cyclic-grid-head_major-pair"), 128, bf16, false},
      {config_named("bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-pair-lag"), 128, f16, true},
      // The last wave split into parts under each persistence (the grid's and static's above):
      // dynamic, whose scheduler hands out the parts, lagged.
      {config_named("bwd-wgmma-m80n128w12s2-sawtooth-dynamic-head_major-lag"), 128, f16, false},
      // dQ added from the consumers' registers (no writer), with the third stage it makes room
      // for at head dim 64: each persistence (dynamic's queue without the writer as a reader),
      // both syncs, a pair; and at two stages on both head dim 128 tiles.
      {config_named("bwd-wgmma-m128n128w12s3-cyclic-dynamic-head_major-lag-red"), 64, bf16, true},
      {config_named("bwd-wgmma-m128n128w12s3-sawtooth-static-groups3-red"), 64, f16, true},
      {config_named("bwd-wgmma-m128n128w12s3-cyclic-grid-heads_interleaved-pair-lag-red"), 64, f16,
       false},
      {config_named("bwd-wgmma-m64n128w12s2-sawtooth-grid-head_major-lag-red"), 128, bf16, true},
      {config_named("bwd-wgmma-m80n128w12s2-cyclic-dynamic-head_major-red"), 128, f16, false},
      // The wide-head kernel (head dim 256: a producer warpgroup and two consumer warpgroups that
      // split the products of a 64 x 64 tile).
      {config_named("bwd-wgmma-m64n64w12s2-cyclic-grid-head_major"), 256, f16, true},
      {config_named("bwd-wgmma-m64n64w12s2-sawtooth-static-heads_interleaved"), 256, bf16, false},
      {config_named("bwd-wgmma-m64n64w12s2-sawtooth-dynamic-groups2-det"), 256, bf16, true},
      {config_named("bwd-wgmma-m64n64w12s1-cyclic-static-head_major-det"), 256, f16, false},
  };
}

std::vector<BackwardCase> all_cases() {
  std::vector<BackwardCase> cases = knob_cases();
  for (const BackwardCase& c : head_dim_cases()) cases.push_back(c);
  for (const BackwardCase& c : wgmma_cases()) cases.push_back(c);
  return cases;
}

struct ModelShape {
  int batch, heads, kv_heads, seq_q, seq_kv;
  CausalAlignment align;
  Storage q_storage, kv_storage;
  int persistent_ctas;
};

std::vector<ModelShape> model_shapes(bool causal) {
  const CausalAlignment top = CausalAlignment::top_left;
  const CausalAlignment bottom = causal ? CausalAlignment::bottom_right : top;
  std::vector<ModelShape> shapes = {
      {2, 4, 4, 257, 257, top, Storage::bhsd, Storage::bhsd, 0},     // MHA, S_q = S_kv
      {1, 8, 2, 130, 333, top, Storage::bshd, Storage::bhsd, 3},     // GQA 4, S_q < S_kv
      {1, 4, 1, 130, 333, bottom, Storage::bshd, Storage::bshd, 0},  // MQA, prefill over a cache
      {2, 4, 4, 333, 301, top, Storage::bhsd, Storage::bshd, 3},     // S_q > S_kv, top-left
  };
  // Bottom-right with S_q > S_kv: the first 123 rows see no key (their gradients are 0).
  if (causal) shapes.push_back({1, 4, 2, 200, 77, bottom, Storage::bhsd, Storage::bhsd, 3});
  // 136 K/V tiles of 128 rows: on 132 SMs, a whole wave and 4 tiles that the warp-specialized
  // kernel splits (backward_last_wave); the shapes above, under a wave, have every tile split.
  if (!causal) shapes.push_back({1, 17, 17, 1000, 1024, top, Storage::bhsd, Storage::bhsd, 0});
  return shapes;
}

std::string case_name(const testing::TestParamInfo<BackwardCase>& info) {
  std::string name = info.param.config.key() + "_d" + std::to_string(info.param.head_dim) + "_" +
                     std::string(to_string(info.param.dtype)) +
                     (info.param.causal ? "_causal" : "");
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

TEST(AttentionBackwardCases, CoverEveryKnobValueAndTheHeadDims) {
  std::set<std::string> seen;
  for (const BackwardCase& c : all_cases()) {
    seen.insert("tile" + std::to_string(c.config.block_m) + "x" + std::to_string(c.config.block_n) +
                "w" + std::to_string(c.config.warps));
    seen.insert("stages" + std::to_string(c.config.stages));
    seen.insert(std::string(to_string(c.config.order)));
    seen.insert(std::string(to_string(c.config.persistence)));
    seen.insert(std::string(to_string(c.config.swizzle)));
    seen.insert(std::string(to_string(c.config.dq)));
    seen.insert(std::string(to_string(c.config.consumers)));
    if (c.config.cta_pairs) seen.insert("cta_pairs");
    seen.insert("d" + std::to_string(c.head_dim) + std::string(to_string(c.dtype)));
    seen.insert(c.causal ? "causal" : "non-causal");
  }
  std::set<std::string> expected = {"tile64x128w8",  "tile32x128w8",      "tile64x64w4",
                                    "tile64x64w8",   "tile32x64w4",       "tile128x64w4",
                                    "tile128x128w8", "tile32x64w8",       "tile64x128w12",
                                    "tile80x128w12", "tile128x128w12",    "tile64x64w12",
                                    "stages1",       "stages2",           "stages3",
                                    "cyclic",        "sawtooth",          "grid",
                                    "static",        "dynamic",           "head_major",
                                    "head_groups",   "heads_interleaved", "atomic",
                                    "deterministic", "lockstep",          "lagged",
                                    "causal",        "non-causal",        "cta_pairs"};
  for (int dim : kSupportedHeadDims) {
    for (const char* dtype : {"f16", "bf16"}) expected.insert("d" + std::to_string(dim) + dtype);
  }
  for (const std::string& value : expected) EXPECT_TRUE(seen.count(value)) << value;
}

class AttentionBackwardOnGpu : public testing::TestWithParam<BackwardCase> {
 protected:
  void SetUp() override { SWR_REQUIRE_GPU(); }
};

// The compiled part of a case's problems, and the forward that makes its O and log-sum-exp.
AttentionProblem compiled_shape(int head_dim, DataType dtype, bool causal) {
  return {1, 4, 257, 257, head_dim, dtype, causal};
}
const AttentionConfig kForward =
    AttentionConfig::from_key("m64n64w4s2-cyclic-grid-head_major").value();

// Every case's backward module and every forward it needs, compiled once in parallel, through
// $SWR_CACHE_DIR's cubin cache when it is set.
const CompiledKernel& compiled(const KernelSource& wanted, const GpuProfile& gpu) {
  static std::mutex mutex;
  static std::map<std::string, CompiledKernel> kernels;
  std::lock_guard lock(mutex);
  if (kernels.empty()) {
    std::vector<KernelSource> sources;
    std::set<std::string> names;
    const auto add = [&](KernelSource source) {
      if (names.insert(source.name).second) sources.push_back(std::move(source));
    };
    for (const BackwardCase& c : all_cases()) {
      const AttentionBackwardProblem problem{compiled_shape(c.head_dim, c.dtype, c.causal)};
      if (!attention_backward_resource_use(problem, c.config, gpu).does_not_fit.empty()) continue;
      add(render_attention_backward_kernel(problem, c.config));
      add(render_attention_kernel(problem.shape, kForward));
    }
    const char* directory = std::getenv("SWR_CACHE_DIR");
    const std::optional<CubinCache> cache =
        directory && *directory ? std::optional<CubinCache>(CubinCache(directory)) : std::nullopt;
    const std::vector<CompiledKernel> built =
        compile_sources(NvrtcCompiler(), cache ? &*cache : nullptr, sources, gpu.arch,
                        static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    for (std::size_t i = 0; i < sources.size(); ++i) kernels[sources[i].name] = built[i];
  }
  return kernels.at(wanted.name);
}

using gpu_test::random_elements;

// A device copy of `values` laid out as `storage` keeps them.
void upload(const DeviceAllocation& to, const std::vector<std::uint16_t>& values, Storage storage,
            const TensorDims& dims) {
  const std::vector<std::uint16_t> laid = gpu_test::stored(values, storage, dims);
  SWR_CU(CudaDriver::get(), cuMemcpyHtoD(to.pointer(), laid.data(), laid.size() * 2));
}
std::vector<std::uint16_t> download(const DeviceAllocation& from, Storage storage,
                                    const TensorDims& dims) {
  std::vector<std::uint16_t> laid(dims.elements());
  SWR_CU(CudaDriver::get(), cuMemcpyDtoH(laid.data(), from.pointer(), laid.size() * 2));
  return gpu_test::gathered(laid, storage, dims);
}

TEST_P(AttentionBackwardOnGpu, MatchesReferenceOnModelShapes) {
  const BackwardCase& c = GetParam();
  const CudaDriver& driver = CudaDriver::get();
  DeviceContext context;
  const auto gpu = detect_present_gpu();
  ASSERT_TRUE(gpu.has_value());
  const AttentionBackwardProblem first{compiled_shape(c.head_dim, c.dtype, c.causal)};
  if (std::string why = attention_backward_resource_use(first, c.config, *gpu).does_not_fit;
      !why.empty()) {
    GTEST_SKIP() << c.config.key() << " d" << c.head_dim << " does not fit " << gpu->name << ": "
                 << why;
  }
  const KernelSource backward_source = render_attention_backward_kernel(first, c.config);
  const CompiledKernel& backward_kernel = compiled(backward_source, *gpu);
  ASSERT_TRUE(backward_kernel.ok) << backward_kernel.log;
  const KernelSource forward_source = render_attention_kernel(first.shape, kForward);
  const CompiledKernel& forward_kernel = compiled(forward_source, *gpu);
  ASSERT_TRUE(forward_kernel.ok) << forward_kernel.log;
  AttentionKernelModule forward(driver, forward_kernel.cubin, kForward,
                                forward_source.dynamic_shared_bytes, gpu->sm_count);
  AttentionBackwardModule backward(driver, backward_kernel.cubin, c.config,
                                   backward_source.dynamic_shared_bytes, gpu->sm_count);

  std::mt19937 rng(std::random_device{}());  // fresh inputs every run
  const double tolerance = relative_error_tolerance(c.dtype);
  std::vector<ModelShape> shapes = model_shapes(c.causal);
  // SWR_BACKWARD_FIRST_SHAPE_ONLY=1: the first shape only (compute-sanitizer runs, ~100x slower).
  if (const char* first_only = std::getenv("SWR_BACKWARD_FIRST_SHAPE_ONLY");
      first_only != nullptr && std::string(first_only) == "1") {
    shapes.resize(1);
  }
  for (const ModelShape& shape : shapes) {
    AttentionProblem problem{shape.batch, shape.heads, shape.seq_q, shape.seq_kv,
                             c.head_dim,  c.dtype,     c.causal};
    problem.kv_heads = shape.kv_heads;
    problem.causal_align = shape.align;
    const AttentionBackwardProblem backward_problem{problem};
    const TensorDims q_dims{shape.batch, shape.heads, shape.seq_q, c.head_dim};
    const TensorDims kv_dims{shape.batch, shape.kv_heads, shape.seq_kv, c.head_dim};
    const auto q = random_elements(c.dtype, q_dims.elements(), rng);
    const auto k = random_elements(c.dtype, kv_dims.elements(), rng);
    const auto v = random_elements(c.dtype, kv_dims.elements(), rng);
    const auto d_o = random_elements(c.dtype, q_dims.elements(), rng);
    const BackwardReference reference = reference_attention_backward(problem, q, k, v, d_o);

    const std::size_t q_bytes = q_dims.elements() * 2, kv_bytes = kv_dims.elements() * 2;
    DeviceAllocation dq_in(driver, q_bytes), dk_in(driver, kv_bytes), dv_in(driver, kv_bytes),
        o(driver, q_bytes), grad_out(driver, q_bytes), counter(driver, sizeof(int)),
        lse(driver, static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq_q * 4);
    upload(dq_in, q, shape.q_storage, q_dims);
    upload(dk_in, k, shape.kv_storage, kv_dims);
    upload(dv_in, v, shape.kv_storage, kv_dims);
    upload(grad_out, d_o, shape.q_storage, q_dims);
    const ElementStrides q_strides = gpu_test::strides_of(shape.q_storage, q_dims);
    const ElementStrides kv_strides = gpu_test::strides_of(shape.kv_storage, kv_dims);
    const std::string where = problem.key() + " Q/O " + gpu_test::storage_name(shape.q_storage) +
                              ", K/V " + gpu_test::storage_name(shape.kv_storage);

    // The forward, asked for the log-sum-exp.
    AttentionBuffers forward_buffers{dq_in.pointer(), dk_in.pointer(), dv_in.pointer(), o.pointer(),
                                     counter.pointer()};
    forward_buffers.q_strides = forward_buffers.o_strides = q_strides;
    forward_buffers.k_strides = forward_buffers.v_strides = kv_strides;
    forward_buffers.lse = lse.pointer();
    SWR_CU(driver, cuMemsetD8Async(lse.pointer(), 0xff, reference.lse.size() * 4, nullptr));
    forward.launch(problem, forward_buffers, nullptr);
    std::vector<float> lse_values(reference.lse.size());
    SWR_CU(driver, cuStreamSynchronize(nullptr));
    SWR_CU(driver, cuMemcpyDtoH(lse_values.data(), lse.pointer(), lse_values.size() * 4));
    double worst_lse = 0;
    for (std::size_t i = 0; i < lse_values.size(); ++i) {
      if (std::isinf(reference.lse[i])) {
        EXPECT_TRUE(std::isinf(lse_values[i]) && lse_values[i] > 0) << where << " row " << i;
      } else {
        worst_lse = std::max(worst_lse, std::abs(lse_values[i] - reference.lse[i]));
      }
    }
    EXPECT_LT(worst_lse, 1e-3) << where << ": the forward's log-sum-exp";

    // The backward, its outputs poisoned, twice: the deterministic mode's dQ must repeat exactly.
    const BackwardWorkspaceLayout layout = backward_workspace_layout(backward_problem, c.config);
    DeviceAllocation workspace(driver, layout.bytes);
    std::vector<std::uint16_t> first_dq;
    for (int run = 0; run < (c.config.dq == DqAccumulation::deterministic ? 2 : 1); ++run) {
      DeviceAllocation dq(driver, q_bytes), dk(driver, kv_bytes), dv(driver, kv_bytes);
      for (const DeviceAllocation* out : {&dq, &dk, &dv}) {
        SWR_CU(driver,
               cuMemsetD8Async(out->pointer(), 0xff, out == &dq ? q_bytes : kv_bytes, nullptr));
      }
      AttentionBackwardBuffers buffers;
      buffers.q = dq_in.pointer();
      buffers.k = dk_in.pointer();
      buffers.v = dv_in.pointer();
      buffers.o = o.pointer();
      buffers.d_o = grad_out.pointer();
      buffers.lse = lse.pointer();
      buffers.dq = dq.pointer();
      buffers.dk = dk.pointer();
      buffers.dv = dv.pointer();
      buffers.workspace = workspace.pointer();
      buffers.workspace_bytes = layout.bytes;
      buffers.tile_counter = counter.pointer();
      buffers.q_strides = buffers.o_strides = buffers.d_o_strides = buffers.dq_strides = q_strides;
      buffers.k_strides = buffers.v_strides = buffers.dk_strides = buffers.dv_strides = kv_strides;
      const int ctas = c.config.persistence == Persistence::grid ? 0 : shape.persistent_ctas;
      backward.launch(backward_problem, buffers, nullptr, ctas);
      SWR_CU(driver, cuStreamSynchronize(nullptr));
      const auto got_dq = download(dq, shape.q_storage, q_dims);
      const auto got_dk = download(dk, shape.kv_storage, kv_dims);
      const auto got_dv = download(dv, shape.kv_storage, kv_dims);
      const std::pair<const char*,
                      std::pair<const std::vector<std::uint16_t>*, const std::vector<double>*>>
          gradients[] = {{"dQ", {&got_dq, &reference.dq}},
                         {"dK", {&got_dk, &reference.dk}},
                         {"dV", {&got_dv, &reference.dv}}};
      std::string errors;
      for (const auto& [name, pair] : gradients) {
        const OutputComparison result = compare_with_reference(problem, *pair.first, *pair.second);
        errors += std::string(" ") + name + " " + std::to_string(result.relative_error);
        EXPECT_TRUE(result.passes(tolerance))
            << where << " " << name << " (run " << run << "): relative error "
            << result.relative_error << " (tolerance " << tolerance << "), non-finite "
            << result.non_finite;
      }
      // The errors on record, for the bound (tests pass well under it or the bound is wrong).
      std::cout << "[ errors   ] " << where << " run " << run << ":" << errors << "\n";
      if (run == 0) {
        first_dq = got_dq;
      } else {
        EXPECT_EQ(got_dq, first_dq) << where << ": deterministic dQ differs between two runs";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKnobAndHeadDim, AttentionBackwardOnGpu,
                         testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace swr
