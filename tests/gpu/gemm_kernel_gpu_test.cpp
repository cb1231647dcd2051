// Every knob value of the GEMM template, compiled with NVRTC for the present GPU, checked against a
// double-precision CPU reference on odd sizes (M, N, K tails; fewer k tiles than stages) with a
// poisoned output, under several swizzles and persistent grids; and cuBLAS (the tuner's baseline
// and reference for large sizes) against the same reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "generator/gemm_kernel_source.hpp"
#include "generator/gemm_space.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/resource_model.hpp"
#include "runtime/gemm_launcher.hpp"
#include "swr/gemm_config.hpp"
#include "swr/sixteen_bit.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tuner/cublas_baseline.hpp"
#include "tuner/gemm_reference.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr {
namespace {

struct GemmCase {
  GemmConfig config;
  DataType dtype;
};

// Each tile shape with both k depths; stages, persistence and dtype cycle with other moduli so
// the values mix.
std::vector<GemmCase> knob_cases() {
  struct Tile {
    int block_m, block_n, warps_m, warps_n;
  };
  const Tile tiles[] = {{128, 128, 2, 4}, {128, 256, 2, 4}, {256, 128, 4, 2},
                        {128, 128, 2, 2}, {64, 128, 2, 2},  {64, 64, 2, 2}};
  std::vector<GemmCase> cases;
  for (int i = 0; i < 12; ++i) {
    GemmCase c;
    const Tile& tile = tiles[i % 6];
    c.config.block_m = tile.block_m;
    c.config.block_n = tile.block_n;
    c.config.warps_m = tile.warps_m;
    c.config.warps_n = tile.warps_n;
    c.config.block_k = i < 6 ? 32 : 64;
    c.config.stages = 2 + i % 3;
    c.config.persistence = (i % 4) < 2 ? GemmPersistence::grid : GemmPersistence::static_loop;
    c.dtype = (i % 5) % 2 ? DataType::bf16 : DataType::f16;
    cases.push_back(c);
  }
  // wgmma (sm_90a; skipped elsewhere): every tile/mode of the space, every persistence, every
  // cluster shape (1x1, 2x1 multicasting B, 1x2 multicasting A, 2x2 both), both dtypes. 2x2 on
  // each cooperative tile (128x192: B chunks split 2 + 1 down a cluster column), on pingpong's
  // narrowest A shares (32 rows), and under stream-K. Every width that is not a multiple of 64
  // (its part chunk stored directly next to the TMA-stored chunks; N = 200, 1016 and 520 put
  // tile borders inside a 64-column box); 176 also without a cluster and under stream-K (a
  // 22-quad fixup), outside the space. Transposed (C^T = B^T A^T: B read MN-major as the first
  // operand, the tile stored by stmatrix.trans): the space's 2x2 widths, and outside it 1x1,
  // dynamic, pingpong (two m64 slices per warpgroup), 1x2 and stream-K.
  struct WgmmaCase {
    int block_m, block_n, stages;
    GemmConsumerMode mode;
    GemmPersistence persistence;
    int cluster_m;
    DataType dtype;
    int cluster_n = 1;
    bool transposed = false;
  };
  using M = GemmConsumerMode;
  using P = GemmPersistence;
  const WgmmaCase wgmma[] = {
      {128, 256, 3, M::cooperative, P::static_loop, 1, DataType::f16},
      {128, 256, 3, M::cooperative, P::static_loop, 2, DataType::bf16},
      {256, 128, 3, M::cooperative, P::dynamic_loop, 1, DataType::bf16},
      {128, 192, 4, M::cooperative, P::static_loop, 2, DataType::f16},
      {128, 128, 4, M::cooperative, P::dynamic_loop, 1, DataType::f16},
      {128, 128, 4, M::pingpong, P::dynamic_loop, 1, DataType::bf16},
      {128, 128, 4, M::pingpong, P::static_loop, 2, DataType::f16},
      {64, 256, 4, M::pingpong, P::static_loop, 1, DataType::bf16},
      {128, 256, 3, M::cooperative, P::static_loop, 1, DataType::f16, 2},
      {256, 128, 3, M::cooperative, P::static_loop, 1, DataType::bf16, 2},
      {64, 256, 4, M::pingpong, P::static_loop, 1, DataType::f16, 2},
      {128, 256, 3, M::cooperative, P::stream_k, 2, DataType::f16},
      {256, 128, 3, M::cooperative, P::stream_k, 1, DataType::bf16},
      {128, 128, 4, M::cooperative, P::stream_k, 1, DataType::f16},
      {128, 256, 3, M::cooperative, P::static_loop, 2, DataType::f16, 2},
      {256, 128, 3, M::cooperative, P::static_loop, 2, DataType::bf16, 2},
      {128, 192, 4, M::cooperative, P::static_loop, 2, DataType::bf16, 2},
      {128, 128, 4, M::cooperative, P::static_loop, 2, DataType::f16, 2},
      {64, 256, 4, M::pingpong, P::static_loop, 2, DataType::f16, 2},
      {128, 256, 3, M::cooperative, P::stream_k, 2, DataType::bf16, 2},
      {128, 128, 4, M::cooperative, P::stream_k, 2, DataType::f16, 2},
      {128, 144, 4, M::cooperative, P::static_loop, 2, DataType::bf16, 2},
      {128, 160, 4, M::cooperative, P::static_loop, 2, DataType::f16, 2},
      {128, 176, 4, M::cooperative, P::static_loop, 2, DataType::f16, 2},
      {128, 208, 3, M::cooperative, P::static_loop, 2, DataType::bf16, 2},
      {128, 224, 3, M::cooperative, P::static_loop, 2, DataType::f16, 2},
      {128, 240, 3, M::cooperative, P::static_loop, 2, DataType::bf16, 2},
      {128, 176, 4, M::cooperative, P::static_loop, 1, DataType::bf16},
      {128, 176, 4, M::cooperative, P::stream_k, 2, DataType::bf16, 2},
      {128, 176, 4, M::cooperative, P::static_loop, 2, DataType::bf16, 2, true},
      {128, 256, 3, M::cooperative, P::static_loop, 2, DataType::f16, 2, true},
      {128, 144, 4, M::cooperative, P::dynamic_loop, 1, DataType::f16, 1, true},
      {128, 192, 4, M::cooperative, P::static_loop, 1, DataType::bf16, 1, true},
      {128, 128, 4, M::pingpong, P::static_loop, 1, DataType::bf16, 2, true},
      {128, 208, 3, M::cooperative, P::stream_k, 2, DataType::bf16, 1, true}};
  for (const WgmmaCase& w : wgmma) {
    GemmCase c;
    c.config.path = InstructionPath::wgmma;
    c.config.block_m = w.block_m;
    c.config.block_n = w.block_n;
    c.config.block_k = 64;
    c.config.stages = w.stages;
    c.config.consumer_mode = w.mode;
    c.config.persistence = w.persistence;
    c.config.cluster_m = w.cluster_m;
    c.config.cluster_n = w.cluster_n;
    c.config.transposed = w.transposed;
    c.dtype = w.dtype;
    cases.push_back(c);
  }
  return cases;
}

// The orders each case runs under: plain, bands along n (several widths, one ragged), bands along
// m, and a stride wider than any grid (column-major along m).
std::vector<std::pair<int, SwizzleAxis>> swizzles() {
  return {{0, SwizzleAxis::n},
          {256, SwizzleAxis::n},
          {1792, SwizzleAxis::n},
          {512, SwizzleAxis::m},
          {100000, SwizzleAxis::m}};
}

// M odd, N not a multiple of any tile, K not a multiple of block_k, K smaller than the pipeline.
const GemmProblem kShapes[] = {{333, 200, 264, DataType::f16},
                               {1000, 1016, 72, DataType::f16},
                               {77, 520, 1032, DataType::f16},
                               {129, 8, 8, DataType::f16}};

void PrintTo(const GemmCase& c, std::ostream* out) {
  *out << c.config.key() << " " << to_string(c.dtype);
}

std::string case_name(const testing::TestParamInfo<GemmCase>& info) {
  std::string name = info.param.config.key() + "_" + std::string(to_string(info.param.dtype));
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

TEST(GemmKernelCases, CoverEveryKnobValue) {
  std::set<std::string> seen;
  for (const GemmCase& c : knob_cases()) {
    seen.insert(std::to_string(c.config.block_m) + "x" + std::to_string(c.config.block_n) + "w" +
                std::to_string(c.config.warps()));
    seen.insert("k" + std::to_string(c.config.block_k));
    seen.insert("s" + std::to_string(c.config.stages));
    seen.insert(std::string(to_string(c.config.persistence)));
    seen.insert(std::string(to_string(c.dtype)));
    if (c.config.path == InstructionPath::wgmma) {
      seen.insert(std::string(to_string(c.config.consumer_mode)) + " c" +
                  std::to_string(c.config.cluster_m) + "x" + std::to_string(c.config.cluster_n));
      if (c.config.transposed) seen.insert("transposed " + std::to_string(c.config.block_n));
    }
  }
  std::set<std::string> expected = {"k32",  "k64",    "s2",  "s3",  "s4",
                                    "grid", "static", "f16", "bf16"};
  for (const char* value :
       {"dynamic", "streamk", "cooperative c1x1", "cooperative c2x1", "cooperative c1x2",
        "cooperative c2x2", "pingpong c1x1", "pingpong c2x1", "pingpong c1x2", "pingpong c2x2"})
    expected.insert(value);
  for (const GemmConfig& config : enumerate_gemm_configs()) {
    expected.insert(std::to_string(config.block_m) + "x" + std::to_string(config.block_n) + "w" +
                    std::to_string(config.warps()));
    if (config.transposed && config.block_n % 64 == 0)
      expected.insert("transposed " + std::to_string(config.block_n));
  }
  for (const std::string& value : expected) EXPECT_TRUE(seen.count(value)) << value;
}

struct DeviceBuffer {
  const CudaDriver& driver;
  CUdeviceptr pointer = 0;
  DeviceBuffer(const CudaDriver& d, std::size_t bytes) : driver(d) {
    SWR_CU(driver, cuMemAlloc(&pointer, bytes));
  }
  ~DeviceBuffer() { driver.cuMemFree(pointer); }
};

std::vector<std::uint16_t> random_elements(DataType type, std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<std::uint16_t> values(count);
  for (auto& v : values) v = float_to_element(type, uniform(rng));
  return values;
}

// Inputs of one shape on the device, with their reference result.
struct ShapeData {
  GemmProblem problem;
  std::vector<double> reference;
  std::unique_ptr<DeviceBuffer> a, b, c;
  std::size_t c_count = 0;

  ShapeData(const CudaDriver& driver, GemmProblem shape, DataType dtype, std::mt19937& rng)
      : problem(shape) {
    problem.dtype = dtype;
    const std::size_t a_count = std::size_t(problem.m) * problem.k;
    const std::size_t b_count = std::size_t(problem.k) * problem.n;
    c_count = std::size_t(problem.m) * problem.n;
    const auto a_host = random_elements(dtype, a_count, rng);
    const auto b_host = random_elements(dtype, b_count, rng);
    reference = reference_gemm(problem, a_host, b_host);
    a = std::make_unique<DeviceBuffer>(driver, a_count * 2);
    b = std::make_unique<DeviceBuffer>(driver, b_count * 2);
    c = std::make_unique<DeviceBuffer>(driver, c_count * 2);
    SWR_CU(driver, cuMemcpyHtoD(a->pointer, a_host.data(), a_count * 2));
    SWR_CU(driver, cuMemcpyHtoD(b->pointer, b_host.data(), b_count * 2));
  }
  GemmBuffers buffers() const { return {a->pointer, b->pointer, c->pointer}; }

  // Poisons C (0xffff is NaN in both types), runs `launch`, and compares.
  template <class Launch>
  OutputComparison run(const CudaDriver& driver, Launch&& launch) const {
    SWR_CU(driver, cuMemsetD8Async(c->pointer, 0xff, c_count * 2, nullptr));
    launch();
    SWR_CU(driver, cuStreamSynchronize(nullptr));
    std::vector<std::uint16_t> out(c_count);
    SWR_CU(driver, cuMemcpyDtoH(out.data(), c->pointer, c_count * 2));
    return compare_gemm_output(problem.dtype, out, reference);
  }
};

class GemmKernelOnGpu : public testing::TestWithParam<GemmCase> {
 protected:
  void SetUp() override { SWR_REQUIRE_GPU(); }
};

TEST_P(GemmKernelOnGpu, MatchesReferenceOnOddSizes) {
  const GemmCase& c = GetParam();
  const CudaDriver& driver = CudaDriver::get();
  DeviceContext context;
  const auto gpu = detect_present_gpu();
  ASSERT_TRUE(gpu.has_value());
  const ResourceUse use = gemm_resource_use(c.config, *gpu);
  if (!use.does_not_fit.empty()) GTEST_SKIP() << use.does_not_fit;

  const KernelSource source = render_gemm_kernel({64, 64, 64, c.dtype}, c.config);
  NvrtcCompiler compiler;
  const CompiledKernel kernel = compiler.compile(source, gpu->arch);
  ASSERT_TRUE(kernel.ok) << kernel.log;
  GemmKernelModule module(driver, kernel.cubin, c.config, source.dynamic_shared_bytes,
                          gpu->sm_count);

  std::mt19937 rng(std::random_device{}());  // fresh inputs every run
  int checked = 0;
  for (const GemmProblem& shape : kShapes) {
    const ShapeData data(driver, shape, c.dtype, rng);
    for (const auto& [stride, axis] : swizzles()) {
      const GemmConfig config = with_swizzle(c.config, stride, axis);
      // Persistent grids also run with 3 CTAs, so that every CTA takes several tiles.
      for (int persistent_ctas : {0, 3}) {
        if (persistent_ctas && c.config.persistence == GemmPersistence::grid) continue;
        const OutputComparison result = data.run(driver, [&] {
          module.launch(data.problem, data.buffers(), nullptr, config, persistent_ctas);
        });
        ++checked;
        EXPECT_TRUE(result.passes(relative_error_tolerance(c.dtype)))
            << config.key() << " on " << data.problem.key()
            << " persistent_ctas=" << persistent_ctas << ": relative error "
            << result.relative_error << ", non-finite " << result.non_finite;
      }
    }
  }
  std::printf("%s %s: %d runs checked, %d registers\n", c.config.key().c_str(),
              std::string(to_string(c.dtype)).c_str(), checked, module.registers_per_thread());
}

INSTANTIATE_TEST_SUITE_P(EveryKnob, GemmKernelOnGpu, testing::ValuesIn(knob_cases()), case_name);

TEST(CublasBaselineOnGpu, MatchesReferenceOnOddSizes) {
  SWR_REQUIRE_GPU();
  const CudaDriver& driver = CudaDriver::get();
  DeviceContext context;
  std::string why;
  const auto cublas = CublasBaseline::load(why);
  if (!cublas) GTEST_SKIP() << why;
  std::printf("cuBLAS %s\n", cublas->version().c_str());
  std::mt19937 rng(7);
  for (DataType dtype : {DataType::f16, DataType::bf16}) {
    for (const GemmProblem& shape : kShapes) {
      const ShapeData data(driver, shape, dtype, rng);
      const OutputComparison result =
          data.run(driver, [&] { cublas->multiply(data.problem, data.buffers(), nullptr); });
      EXPECT_TRUE(result.passes(relative_error_tolerance(dtype)))
          << "cuBLAS on " << data.problem.key() << ": relative error " << result.relative_error
          << ", non-finite " << result.non_finite;
    }
  }
}

}  // namespace
}  // namespace swr
