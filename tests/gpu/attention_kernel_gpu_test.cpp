// Every knob value of the attention template, compiled with NVRTC for the present GPU, checked
// against a double-precision CPU reference on fresh random inputs with a poisoned output.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "generator/kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/resource_model.hpp"
#include "runtime/attention_launcher.hpp"
#include "swr/attention_config.hpp"
#include "swr/sixteen_bit.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/random_sixteen_bit.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/reference_attention.hpp"

namespace swr {
namespace {

struct KernelCase {
  AttentionConfig config;
  int head_dim;
  DataType dtype;
  bool causal;
};

// Each knob takes each of its values at least once; the moduli differ so the values mix.
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
    c.config.head_group = c.config.swizzle == TileSwizzle::head_groups ? 2 : 1;
    c.head_dim = (i % 4) < 2 ? 64 : 128;
    c.dtype = (i % 7) % 2 ? DataType::bf16 : DataType::f16;
    c.causal = (i % 5) % 2 == 1 || i == 0;
    cases.push_back(c);
  }
  return cases;
}

// gtest prints parameters it cannot format as raw bytes; show the variant instead.
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

TEST(AttentionKernelCases, CoverEveryKnobValue) {
  std::set<std::string> seen;
  for (const KernelCase& c : knob_cases()) {
    seen.insert("tile" + std::to_string(c.config.block_m) + "x" + std::to_string(c.config.block_n) +
                "w" + std::to_string(c.config.warps));
    seen.insert("stages" + std::to_string(c.config.stages));
    seen.insert(std::string(to_string(c.config.order)));
    seen.insert(std::string(to_string(c.config.persistence)));
    seen.insert(std::string(to_string(c.config.swizzle)));
    seen.insert("d" + std::to_string(c.head_dim));
    seen.insert(std::string(to_string(c.dtype)));
    seen.insert(c.causal ? "causal" : "non-causal");
  }
  for (const char* value :
       {"tile64x64w4", "tile128x64w4", "tile128x64w8", "tile128x128w8", "tile64x128w4",
        "stages1",     "stages2",      "stages3",      "cyclic",        "sawtooth",
        "grid",        "static",       "dynamic",      "head_major",    "heads_interleaved",
        "head_groups", "d64",          "d128",         "f16",           "bf16",
        "causal",      "non-causal"})
    EXPECT_TRUE(seen.count(value)) << value;
}

class AttentionKernelOnGpu : public testing::TestWithParam<KernelCase> {
 protected:
  void SetUp() override { SWR_REQUIRE_GPU(); }
};

struct DeviceBuffer {
  const CudaDriver& driver;
  CUdeviceptr pointer = 0;
  DeviceBuffer(const CudaDriver& d, std::size_t bytes) : driver(d) {
    SWR_CU(driver, cuMemAlloc(&pointer, bytes));
  }
  ~DeviceBuffer() { driver.cuMemFree(pointer); }
};

using gpu_test::random_elements;

TEST_P(AttentionKernelOnGpu, MatchesReference) {
  const KernelCase& c = GetParam();
  const CudaDriver& driver = CudaDriver::get();
  DeviceContext context;
  const auto gpu = detect_present_gpu();
  ASSERT_TRUE(gpu.has_value());

  // Odd lengths (masked tails), S_q != S_kv, B > 1 and H > 1.
  const AttentionProblem shapes[] = {{2, 3, 333, 301, c.head_dim, c.dtype, c.causal},
                                     {1, 2, 257, 257, c.head_dim, c.dtype, c.causal}};
  const KernelSource source = render_attention_kernel(shapes[0], c.config);
  NvrtcCompiler compiler;
  const CompiledKernel kernel = compiler.compile(source, gpu->arch);
  ASSERT_TRUE(kernel.ok) << kernel.log;
  AttentionKernelModule module(driver, kernel.cubin, c.config, source.dynamic_shared_bytes,
                               gpu->sm_count);

  std::mt19937 rng(std::random_device{}());  // fresh inputs every run
  for (const AttentionProblem& problem : shapes) {
    // Persistent modes also run with 3 CTAs, so that every CTA takes several tiles.
    for (int persistent_ctas : {0, 3}) {
      if (persistent_ctas && c.config.persistence == Persistence::grid) continue;
      const std::size_t q_count =
          static_cast<std::size_t>(problem.batch) * problem.heads * problem.seq_q * c.head_dim;
      const std::size_t kv_count =
          static_cast<std::size_t>(problem.batch) * problem.heads * problem.seq_kv * c.head_dim;
      const auto q = random_elements(c.dtype, q_count, rng);
      const auto k = random_elements(c.dtype, kv_count, rng);
      const auto v = random_elements(c.dtype, kv_count, rng);
      DeviceBuffer dq(driver, q_count * 2), dk(driver, kv_count * 2), dv(driver, kv_count * 2),
          dout(driver, q_count * 2), counter(driver, sizeof(int));
      SWR_CU(driver, cuMemcpyHtoD(dq.pointer, q.data(), q_count * 2));
      SWR_CU(driver, cuMemcpyHtoD(dk.pointer, k.data(), kv_count * 2));
      SWR_CU(driver, cuMemcpyHtoD(dv.pointer, v.data(), kv_count * 2));
      SWR_CU(driver, cuMemsetD8Async(dout.pointer, 0xff, q_count * 2, nullptr));  // NaN poison

      module.launch(problem, {dq.pointer, dk.pointer, dv.pointer, dout.pointer, counter.pointer},
                    nullptr, persistent_ctas);
      SWR_CU(driver, cuStreamSynchronize(nullptr));
      std::vector<std::uint16_t> out(q_count);
      SWR_CU(driver, cuMemcpyDtoH(out.data(), dout.pointer, q_count * 2));

      const OutputComparison result =
          compare_with_reference(problem, out, reference_attention(problem, q, k, v));
      EXPECT_TRUE(result.passes(relative_error_tolerance(c.dtype)))
          << problem.key() << " persistent_ctas=" << persistent_ctas << ": relative error "
          << result.relative_error << ", non-finite " << result.non_finite;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKnob, AttentionKernelOnGpu, testing::ValuesIn(knob_cases()),
                         case_name);

}  // namespace
}  // namespace swr
