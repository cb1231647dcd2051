// The GPU side of the correctness check: the reference kernel against the CPU reference, the
// non-finite counter, the device random fill, and check_output on known-good and broken outputs
// and on a real attention variant.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <numeric>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "generator/kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "runtime/attention_launcher.hpp"
#include "swr/sixteen_bit.hpp"
#include "tests/gpu/attention_layouts.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tuner/attention_reference_kernel.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/reference_attention.hpp"

namespace swr {
namespace {

struct DeviceBuffer {
  const CudaDriver& driver;
  CUdeviceptr pointer = 0;
  DeviceBuffer(const CudaDriver& d, std::size_t bytes) : driver(d) {
    SWR_CU(driver, cuMemAlloc(&pointer, bytes));
  }
  ~DeviceBuffer() { driver.cuMemFree(pointer); }
};

std::vector<std::uint16_t> download(const CudaDriver& driver, CUdeviceptr pointer,
                                    std::size_t count) {
  std::vector<std::uint16_t> values(count);
  SWR_CU(driver, cuStreamSynchronize(nullptr));
  SWR_CU(driver, cuMemcpyDtoH(values.data(), pointer, count * 2));
  return values;
}

std::size_t q_elements(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.batch) * p.heads * p.seq_q * p.head_dim;
}
std::size_t kv_elements(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.batch) * p.kv_head_count() * p.seq_kv * p.head_dim;
}

// Device tensors of a problem with random inputs and a NaN-poisoned output.
struct AttentionTensors {
  DeviceBuffer q, k, v, o, counter;
  AttentionTensors(const CudaDriver& driver, const DeviceRandomFill& fill,
                   const AttentionProblem& p, std::uint64_t seed)
      : q(driver, q_elements(p) * 2),
        k(driver, kv_elements(p) * 2),
        v(driver, kv_elements(p) * 2),
        o(driver, q_elements(p) * 2),
        counter(driver, sizeof(int)) {
    fill.fill(q.pointer, q_elements(p), p.dtype, seed, nullptr);
    fill.fill(k.pointer, kv_elements(p), p.dtype, seed + 1, nullptr);
    fill.fill(v.pointer, kv_elements(p), p.dtype, seed + 2, nullptr);
    SWR_CU(driver, cuMemsetD8Async(o.pointer, 0xff, q_elements(p) * 2, nullptr));
  }
  AttentionBuffers buffers() const {
    return {q.pointer, k.pointer, v.pointer, o.pointer, counter.pointer};
  }
};

class AttentionReferenceOnGpu : public testing::Test {
 protected:
  void SetUp() override {
    SWR_REQUIRE_GPU();
    context_ = std::make_unique<DeviceContext>();
    fill_ = std::make_unique<DeviceRandomFill>(*context_);
    reference_ = std::make_unique<AttentionReferenceKernel>(*context_);
  }
  const CudaDriver& driver() const { return CudaDriver::get(); }

  std::unique_ptr<DeviceContext> context_;
  std::unique_ptr<DeviceRandomFill> fill_;
  std::unique_ptr<AttentionReferenceKernel> reference_;
};

// Every head dim's row length, grouped K/V heads, both causal alignments (with rows that see no
// key), and Q, K, V read as [B, S, H, D] projections: the GPU reference takes what the kernels
// take.
TEST_F(AttentionReferenceOnGpu, AgreesWithTheCpuReferenceOnEveryRow) {
  struct Shape {
    AttentionProblem problem;
    int kv_heads;
    CausalAlignment align;
    gpu_test::Storage storage;
  };
  const Shape shapes[] = {
      {{2, 3, 333, 301, 64, DataType::f16, true},
       0,
       CausalAlignment::top_left,
       gpu_test::Storage::bhsd},
      {{1, 2, 257, 257, 128, DataType::bf16, false},
       0,
       CausalAlignment::top_left,
       gpu_test::Storage::bhsd},
      {{1, 1, 130, 700, 128, DataType::f16, true},
       0,
       CausalAlignment::top_left,
       gpu_test::Storage::bhsd},
      {{2, 1, 200, 64, 64, DataType::bf16, false},
       0,
       CausalAlignment::top_left,
       gpu_test::Storage::bhsd},
      {{1, 8, 130, 333, 80, DataType::f16, true},
       2,
       CausalAlignment::bottom_right,
       gpu_test::Storage::bshd},
      {{2, 4, 200, 77, 256, DataType::bf16, true},
       1,
       CausalAlignment::bottom_right,
       gpu_test::Storage::bhsd},
      {{1, 6, 99, 99, 32, DataType::f16, false},
       3,
       CausalAlignment::top_left,
       gpu_test::Storage::bshd},
  };
  for (const Shape& shape : shapes) {
    AttentionProblem p = shape.problem;
    p.kv_heads = shape.kv_heads;
    p.causal_align = shape.align;
    AttentionTensors tensors(driver(), *fill_, p, fresh_random_seed());
    // The random buffers read in `storage`: the CPU reference gets the tensors that layout holds.
    const gpu_test::TensorDims q_dims{p.batch, p.heads, p.seq_q, p.head_dim};
    const gpu_test::TensorDims kv_dims{p.batch, p.kv_head_count(), p.seq_kv, p.head_dim};
    const auto q = gpu_test::gathered(download(driver(), tensors.q.pointer, q_elements(p)),
                                      shape.storage, q_dims);
    const auto k = gpu_test::gathered(download(driver(), tensors.k.pointer, kv_elements(p)),
                                      shape.storage, kv_dims);
    const auto v = gpu_test::gathered(download(driver(), tensors.v.pointer, kv_elements(p)),
                                      shape.storage, kv_dims);
    const std::vector<double> expected = reference_attention(p, q, k, v);
    AttentionBuffers buffers = tensors.buffers();
    buffers.q_strides = buffers.o_strides = gpu_test::strides_of(shape.storage, q_dims);
    buffers.k_strides = buffers.v_strides = gpu_test::strides_of(shape.storage, kv_dims);

    std::vector<std::int64_t> rows(static_cast<std::size_t>(p.batch) * p.heads * p.seq_q);
    std::iota(rows.begin(), rows.end(), 0);
    const std::vector<double> got = reference_->reference_rows(p, buffers, rows, nullptr);
    ASSERT_EQ(got.size(), expected.size());
    double error = 0, norm = 0, worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      error += (got[i] - expected[i]) * (got[i] - expected[i]);
      norm += expected[i] * expected[i];
      worst = std::max(worst, std::abs(got[i] - expected[i]));
    }
    EXPECT_LT(std::sqrt(error / norm), 1e-5) << p.key();
    EXPECT_LT(worst, 1e-5) << p.key();
    // The gather reads O in the same layout: the rows of a known output come back as they are.
    std::vector<std::uint16_t> o_values(q_elements(p));
    for (std::size_t i = 0; i < o_values.size(); ++i) {
      o_values[i] = float_to_element(p.dtype, static_cast<float>(i % 251) / 251.f);
    }
    const std::vector<std::uint16_t> laid = gpu_test::stored(o_values, shape.storage, q_dims);
    SWR_CU(driver(), cuMemcpyHtoD(tensors.o.pointer, laid.data(), laid.size() * 2));
    EXPECT_EQ(reference_->gather_rows(p, buffers, rows, nullptr), o_values) << p.key();
  }
}

TEST_F(AttentionReferenceOnGpu, NonFiniteCounterCatchesPlantedValues) {
  const std::size_t count = (1 << 20) + 3;  // a tail past the 16-byte words
  DeviceBuffer buffer(driver(), count * 2);
  for (DataType type : {DataType::f16, DataType::bf16}) {
    fill_->fill(buffer.pointer, count, type, 11, nullptr);
    EXPECT_EQ(reference_->count_non_finite(buffer.pointer, count, type, nullptr), 0);
    const std::uint16_t nan = type == DataType::f16 ? 0x7E00 : 0x7FC0;
    const std::uint16_t negative_infinity = type == DataType::f16 ? 0xFC00 : 0xFF80;
    SWR_CU(driver(), cuMemcpyHtoD(buffer.pointer + 2 * 4097, &nan, 2));
    SWR_CU(driver(), cuMemcpyHtoD(buffer.pointer + 2 * (count - 1), &negative_infinity, 2));
    EXPECT_EQ(reference_->count_non_finite(buffer.pointer, count, type, nullptr), 2)
        << to_string(type);
    // Unaligned start: the single-value path sees the same two.
    EXPECT_EQ(reference_->count_non_finite(buffer.pointer + 2, count - 1, type, nullptr), 2);
    // The poison the tuner writes before a run is NaN in both types.
    SWR_CU(driver(), cuMemsetD8Async(buffer.pointer, 0xff, count * 2, nullptr));
    EXPECT_EQ(reference_->count_non_finite(buffer.pointer, count, type, nullptr),
              static_cast<std::int64_t>(count));
  }
}

TEST_F(AttentionReferenceOnGpu, RandomFillIsUniformAndSeeded) {
  const std::size_t count = 1 << 22;
  DeviceBuffer first(driver(), count * 2), second(driver(), count * 2);
  for (DataType type : {DataType::f16, DataType::bf16}) {
    fill_->fill(first.pointer, count, type, 1234, nullptr);
    const auto values = download(driver(), first.pointer, count);
    constexpr int kBins = 20;
    std::vector<std::size_t> histogram(kBins, 0);
    double sum = 0, squares = 0, lag_product = 0, low = 1, high = -1, previous = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const double x = element_to_float(type, values[i]);
      ASSERT_TRUE(x >= -1 && x <= 1) << x;
      sum += x;
      squares += x * x;
      lag_product += x * previous;
      previous = x;
      low = std::min(low, x);
      high = std::max(high, x);
      ++histogram[std::min(kBins - 1, static_cast<int>((x + 1) / 2 * kBins))];
    }
    EXPECT_NEAR(sum / count, 0.0, 0.003) << to_string(type);
    EXPECT_NEAR(squares / count, 1.0 / 3, 0.003) << to_string(type);
    EXPECT_NEAR(lag_product / count, 0.0, 0.003) << "neighbours correlate";
    EXPECT_LT(low, -0.999);
    EXPECT_GT(high, 0.999);
    for (std::size_t bin : histogram) EXPECT_NEAR(bin, count / kBins, count / kBins * 0.03);

    fill_->fill(second.pointer, count, type, 1234, nullptr);
    EXPECT_EQ(download(driver(), second.pointer, count), values) << "same seed, same values";
    fill_->fill(second.pointer, count, type, 1235, nullptr);
    const auto other = download(driver(), second.pointer, count);
    std::size_t equal = 0;
    for (std::size_t i = 0; i < count; ++i) equal += other[i] == values[i];
    EXPECT_LT(equal, count / 100) << "the next seed repeats values";
  }
  EXPECT_NE(fresh_random_seed(), fresh_random_seed());
}

TEST_F(AttentionReferenceOnGpu, CheckOutputPassesAGoodOutputAndCatchesBrokenOnes) {
  const AttentionProblem p{2, 2, 512, 512, 128, DataType::f16, true};
  AttentionTensors tensors(driver(), *fill_, p, fresh_random_seed());
  const auto q = download(driver(), tensors.q.pointer, q_elements(p));
  const auto k = download(driver(), tensors.k.pointer, kv_elements(p));
  const auto v = download(driver(), tensors.v.pointer, kv_elements(p));
  const std::vector<double> expected = reference_attention(p, q, k, v);
  std::vector<std::uint16_t> good(expected.size());
  for (std::size_t i = 0; i < good.size(); ++i) good[i] = float_to_element(p.dtype, expected[i]);
  const double tolerance = relative_error_tolerance(p.dtype);

  // Poisoned and never written: every element is caught.
  OutputComparison result = reference_->check_output(p, tensors.buffers(), 1, nullptr);
  EXPECT_EQ(result.non_finite, static_cast<std::int64_t>(q_elements(p)));
  EXPECT_FALSE(result.passes(tolerance));

  SWR_CU(driver(), cuMemcpyHtoD(tensors.o.pointer, good.data(), good.size() * 2));
  result = reference_->check_output(p, tensors.buffers(), 1, nullptr);
  EXPECT_EQ(result.non_finite, 0);
  EXPECT_LT(result.relative_error, tolerance / 4);
  EXPECT_TRUE(result.passes(tolerance));

  // One unwritten element in a row the sample skips still fails the check.
  const std::vector<std::int64_t> rows = sample_reference_rows(p, 1);
  std::int64_t unsampled = 1;
  while (std::binary_search(rows.begin(), rows.end(), unsampled)) ++unsampled;
  const std::uint16_t poison = 0xffff;
  SWR_CU(driver(), cuMemcpyHtoD(tensors.o.pointer + 2 * (unsampled * p.head_dim + 5), &poison, 2));
  result = reference_->check_output(p, tensors.buffers(), 1, nullptr);
  EXPECT_EQ(result.non_finite, 1);
  EXPECT_FALSE(result.passes(tolerance));

  // A wrong value in a sampled row shows in the error.
  SWR_CU(driver(), cuMemcpyHtoD(tensors.o.pointer, good.data(), good.size() * 2));
  // Row 0 of head 0 (always sampled; under the causal mask it is V's row 0), negated.
  ASSERT_EQ(rows.front(), 0);
  std::vector<std::uint16_t> wrong_row(good.begin(), good.begin() + p.head_dim);
  for (auto& value : wrong_row)
    value = float_to_element(p.dtype, -element_to_float(p.dtype, value));
  SWR_CU(driver(), cuMemcpyHtoD(tensors.o.pointer, wrong_row.data(), wrong_row.size() * 2));
  result = reference_->check_output(p, tensors.buffers(), 1, nullptr);
  EXPECT_EQ(result.non_finite, 0);
  EXPECT_GT(result.relative_error, tolerance);
  EXPECT_FALSE(result.passes(tolerance));
}

TEST_F(AttentionReferenceOnGpu, ChecksARealVariantOnALongSequence) {
  const auto gpu = detect_present_gpu();
  ASSERT_TRUE(gpu.has_value());
  AttentionConfig config;
  config.block_m = 128;
  config.block_n = 64;
  config.warps = 8;
  config.stages = 2;
  config.order = KvOrder::sawtooth;
  config.persistence = Persistence::static_loop;
  for (DataType dtype : {DataType::f16, DataType::bf16}) {
    const AttentionProblem p{2, 2, 16384, 16384, 128, dtype, true};
    const KernelSource source = render_attention_kernel(p, config);
    const CompiledKernel kernel = NvrtcCompiler().compile(source, gpu->arch);
    ASSERT_TRUE(kernel.ok) << kernel.log;
    AttentionKernelModule module(driver(), kernel.cubin, config, source.dynamic_shared_bytes,
                                 gpu->sm_count);
    AttentionTensors tensors(driver(), *fill_, p, fresh_random_seed());
    module.launch(p, tensors.buffers(), nullptr);
    const OutputComparison result =
        reference_->check_output(p, tensors.buffers(), fresh_random_seed(), nullptr);
    std::cout << p.key() << ": relative error " << result.relative_error << ", non-finite "
              << result.non_finite << "\n";
    EXPECT_TRUE(result.passes(relative_error_tolerance(dtype)))
        << p.key() << ": relative error " << result.relative_error << ", non-finite "
        << result.non_finite;
  }
}

// The tuner's headline shape: the sampled reference must cost little next to tuning.
TEST_F(AttentionReferenceOnGpu, ChecksTheTargetShapeInASecond) {
  const auto gpu = detect_present_gpu();
  ASSERT_TRUE(gpu.has_value());
  AttentionConfig config;
  config.order = KvOrder::sawtooth;
  config.persistence = Persistence::static_loop;
  const AttentionProblem p{8, 1, 131072, 131072, 128, DataType::f16, true};
  const KernelSource source = render_attention_kernel(p, config);
  const CompiledKernel kernel = NvrtcCompiler().compile(source, gpu->arch);
  ASSERT_TRUE(kernel.ok) << kernel.log;
  AttentionKernelModule module(driver(), kernel.cubin, config, source.dynamic_shared_bytes,
                               gpu->sm_count);
  AttentionTensors tensors(driver(), *fill_, p, fresh_random_seed());
  module.launch(p, tensors.buffers(), nullptr);
  SWR_CU(driver(), cuStreamSynchronize(nullptr));
  const auto start = std::chrono::steady_clock::now();
  const OutputComparison result =
      reference_->check_output(p, tensors.buffers(), fresh_random_seed(), nullptr);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << p.key() << ": relative error " << result.relative_error << ", non-finite "
            << result.non_finite << ", check took " << seconds << " s\n";
  EXPECT_TRUE(result.passes(relative_error_tolerance(p.dtype)))
      << "relative error " << result.relative_error << ", non-finite " << result.non_finite;
  EXPECT_LT(seconds, 1.0);
}

}  // namespace
}  // namespace swr
