#include "tuner/gemm_reference_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tuner/counters/helper_kernel_module.hpp"

namespace swr {
namespace {

constexpr unsigned kReferenceThreads = 256;  // a 16 x 16 tile of C per block
constexpr unsigned kCompareThreads = 256;
constexpr unsigned kCompareBlocks = 1024;

const char* const kSource = R"(
__device__ float swr_element_to_float(unsigned short bits, int bf16) {
  if (bf16) return __int_as_float(static_cast<int>(bits) << 16);
  float value;
  asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(bits));
  return value;
}

// C[m x n] = A[m x k] · B[k x n] in fp32; block b computes the 16 x 16 tile b of C (row-major
// tile order), thread t its element (t / 16, t % 16).
extern "C" __global__ void swr_gemm_reference(const unsigned short* a, const unsigned short* b,
                                              float* c, int m, int n, int k, int bf16) {
  __shared__ float a_tile[16][17];
  __shared__ float b_tile[16][17];
  const int tiles_n = (n + 15) / 16;
  const int row = (blockIdx.x / tiles_n) * 16 + threadIdx.x / 16;
  const int col = (blockIdx.x % tiles_n) * 16 + threadIdx.x % 16;
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
  float sum = 0.f;
  for (int k0 = 0; k0 < k; k0 += 16) {
    a_tile[ty][tx] = row < m && k0 + tx < k
                         ? swr_element_to_float(a[(long long)row * k + k0 + tx], bf16) : 0.f;
    b_tile[ty][tx] = k0 + ty < k && col < n
                         ? swr_element_to_float(b[(long long)(k0 + ty) * n + col], bf16) : 0.f;
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk) sum += a_tile[ty][kk] * b_tile[kk][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[(long long)row * n + col] = sum;
}

// sums[0] += sum (out - ref)^2, sums[1] += sum ref^2 over finite outputs; counts NaN/inf outputs.
extern "C" __global__ void swr_gemm_compare(const unsigned short* out, const float* ref,
                                            unsigned long long count, int bf16,
                                            double* sums, unsigned long long* non_finite) {
  const unsigned int exponent = bf16 ? 0x7f80u : 0x7c00u;
  double difference = 0, norm = 0;
  unsigned long long bad = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    const unsigned short bits = out[i];
    if ((bits & exponent) == exponent) {
      ++bad;
      continue;
    }
    const double expected = ref[i];
    const double delta = (double)swr_element_to_float(bits, bf16) - expected;
    difference += delta * delta;
    norm += expected * expected;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    difference += __shfl_xor_sync(0xffffffffu, difference, offset);
    norm += __shfl_xor_sync(0xffffffffu, norm, offset);
    bad += __shfl_xor_sync(0xffffffffu, bad, offset);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&sums[0], difference);
    atomicAdd(&sums[1], norm);
    if (bad) atomicAdd(non_finite, bad);
  }
}
)";

}  // namespace

const char* gemm_reference_kernel_source() {
  return kSource;
}

GemmReferenceKernel::GemmReferenceKernel(const DeviceContext& context)
    : module_(std::make_unique<HelperKernelModule>(CudaDriver::get(), context.device(),
                                                   "gemm_reference", kSource)) {
  reference_ = module_->function("swr_gemm_reference");
  compare_ = module_->function("swr_gemm_compare");
  SWR_CU(module_->driver(), cuMemAlloc(&sums_, 3 * sizeof(double)));
}

GemmReferenceKernel::~GemmReferenceKernel() {
  if (sums_) module_->driver().cuMemFree(sums_);
}

void GemmReferenceKernel::compute(const GemmProblem& problem, const GemmBuffers& buffers,
                                  CUdeviceptr reference, CUstream stream) const {
  const long long tiles = static_cast<long long>((problem.m + 15) / 16) * ((problem.n + 15) / 16);
  const void* a = reinterpret_cast<const void*>(buffers.a);
  const void* b = reinterpret_cast<const void*>(buffers.b);
  void* c = reinterpret_cast<void*>(reference);
  module_->launch(reference_, static_cast<unsigned>(tiles), kReferenceThreads, stream, a, b, c,
                  problem.m, problem.n, problem.k, problem.dtype == DataType::bf16 ? 1 : 0);
}

OutputComparison GemmReferenceKernel::compare(const GemmProblem& problem, CUdeviceptr output,
                                              CUdeviceptr reference, CUstream stream) const {
  const CudaDriver& driver = module_->driver();
  SWR_CU(driver, cuMemsetD8Async(sums_, 0, 3 * sizeof(double), stream));
  const void* out = reinterpret_cast<const void*>(output);
  const void* ref = reinterpret_cast<const void*>(reference);
  const unsigned long long count = static_cast<unsigned long long>(problem.m) * problem.n;
  void* sums = reinterpret_cast<void*>(sums_);
  void* non_finite = reinterpret_cast<void*>(sums_ + 2 * sizeof(double));
  module_->launch(compare_, kCompareBlocks, kCompareThreads, stream, out, ref, count,
                  problem.dtype == DataType::bf16 ? 1 : 0, sums, non_finite);
  SWR_CU(driver, cuStreamSynchronize(stream));
  double host[3] = {};
  SWR_CU(driver, cuMemcpyDtoH(host, sums_, sizeof(host)));
  OutputComparison result;
  result.relative_error = host[1] > 0 ? std::sqrt(host[0] / host[1]) : std::sqrt(host[0]);
  std::uint64_t bad = 0;
  static_assert(sizeof(double) == sizeof(std::uint64_t));
  std::memcpy(&bad, &host[2], sizeof(bad));
  result.non_finite = static_cast<std::int64_t>(bad);
  return result;
}

}  // namespace swr
