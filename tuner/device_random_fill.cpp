#include "tuner/device_random_fill.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>

#include "tuner/counters/helper_kernel_module.hpp"

namespace swr {
namespace {

constexpr const char* kKernelName = "swr_fill_uniform";

// splitmix64's finaliser over (hashed seed + index * golden ratio): independent-looking values
// per index, and streams of different seeds that do not overlap within any buffer size.
constexpr const char* kFillSource = R"(
__device__ unsigned long long swr_mix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

extern "C" __global__ void swr_fill_uniform(unsigned short* out, unsigned long long count,
                                            unsigned long long seed, int bf16) {
  const unsigned long long key = swr_mix64(seed + 0x9e3779b97f4a7c15ull);
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    const unsigned long long bits = swr_mix64(key + (i + 1) * 0x9e3779b97f4a7c15ull);
    const float unit = (float)(bits >> 40) * (1.0f / 16777216.0f);  // [0, 1), 24 bits
    const float value = 2.0f * unit - 1.0f;                          // exact in fp32
    unsigned short element;
    if (bf16) {
      asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(element) : "f"(value));
    } else {
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(element) : "f"(value));
    }
    out[i] = element;
  }
}
)";

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kBlocksPerSm = 8;

}  // namespace

const char* random_fill_kernel_source() {
  return kFillSource;
}

DeviceRandomFill::DeviceRandomFill(const DeviceContext& context) {
  const CudaDriver& driver = CudaDriver::get();
  int sm_count = 0;
  SWR_CU(driver, cuDeviceGetAttribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                      context.device()));
  grid_ = static_cast<unsigned>(std::max(1, sm_count) * kBlocksPerSm);
  module_ =
      std::make_unique<HelperKernelModule>(driver, context.device(), kKernelName, kFillSource);
  kernel_ = module_->function(kKernelName);
}

DeviceRandomFill::~DeviceRandomFill() = default;

void DeviceRandomFill::fill(CUdeviceptr buffer, std::size_t count, DataType type,
                            std::uint64_t seed, CUstream stream) const {
  if (count == 0) return;
  void* out = reinterpret_cast<void*>(buffer);
  const unsigned long long elements = count;
  const unsigned long long key = seed;
  const int bf16 = type == DataType::bf16 ? 1 : 0;
  module_->launch(kernel_, grid_, kThreadsPerBlock, stream, out, elements, key, bf16);
}

std::uint64_t fresh_random_seed() {
  static std::atomic<std::uint64_t> calls{0};
  std::random_device device;
  const std::uint64_t entropy = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return entropy ^ static_cast<std::uint64_t>(now) ^ (++calls * 0x9e3779b97f4a7c15ull);
}

}  // namespace swr
