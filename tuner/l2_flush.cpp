#include "tuner/l2_flush.hpp"

#include <algorithm>

#include "tuner/counters/helper_kernel_module.hpp"

namespace swr {
namespace {

// Reads every 16-byte word once (grid-stride, coalesced). The XOR of what was read is written
// only if it equals a constant the zeroed buffer never produces: the loads cannot be dropped, and
// nothing is written in practice. `swr_l2_read` is the same pass under a name the profiler does not
// skip: what the counter tests measure.
constexpr const char* kFlushSource = R"(
__device__ void swr_read_every_word(const uint4* data, unsigned long long words,
                                    unsigned int* sink) {
  unsigned int folded = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < words; i += stride) {
    const uint4 word = data[i];
    folded ^= word.x ^ word.y ^ word.z ^ word.w;
  }
  if (folded == 0x9e3779b9u) *sink = folded;
}
extern "C" __global__ void swr_l2_flush(const uint4* data, unsigned long long words,
                                        unsigned int* sink) {
  swr_read_every_word(data, words, sink);
}
extern "C" __global__ void swr_l2_read(const uint4* data, unsigned long long words,
                                       unsigned int* sink) {
  swr_read_every_word(data, words, sink);
}
)";

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kBlocksPerSm = 8;  // 2048 threads: a full SM of loads in flight
constexpr std::int64_t kWordBytes = 16;

}  // namespace

const char* l2_flush_kernel_source() {
  return kFlushSource;
}

L2Flush::L2Flush(const DeviceContext& context, std::int64_t buffer_bytes)
    : driver_(CudaDriver::get()) {
  int l2_size = 0;
  int sm_count = 0;
  SWR_CU(driver_,
         cuDeviceGetAttribute(&l2_size, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, context.device()));
  SWR_CU(driver_, cuDeviceGetAttribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                       context.device()));
  l2_bytes_ = l2_size;
  buffer_bytes_ = buffer_bytes > 0 ? buffer_bytes : 2 * l2_bytes_;
  buffer_bytes_ = std::max<std::int64_t>(
      kWordBytes, (buffer_bytes_ + kWordBytes - 1) / kWordBytes * kWordBytes);
  grid_ = static_cast<unsigned>(std::max(1, sm_count) * kBlocksPerSm);

  module_ =
      std::make_unique<HelperKernelModule>(driver_, context.device(), kKernelName, kFlushSource);
  kernel_ = module_->function(kKernelName);
  SWR_CU(driver_, cuMemAlloc(&buffer_, static_cast<std::size_t>(buffer_bytes_)));
  try {
    SWR_CU(driver_, cuMemAlloc(&sink_, sizeof(unsigned)));
    SWR_CU(driver_, cuMemsetD8Async(buffer_, 0, static_cast<std::size_t>(buffer_bytes_), nullptr));
    SWR_CU(driver_, cuStreamSynchronize(nullptr));
  } catch (...) {
    if (sink_) driver_.cuMemFree(sink_);
    driver_.cuMemFree(buffer_);
    throw;
  }
}

L2Flush::~L2Flush() {
  driver_.cuMemFree(sink_);
  driver_.cuMemFree(buffer_);
}

void L2Flush::launch(CUstream stream) const {
  const unsigned long long words = static_cast<unsigned long long>(buffer_bytes_ / kWordBytes);
  const void* data = reinterpret_cast<const void*>(buffer_);
  void* sink = reinterpret_cast<void*>(sink_);
  module_->launch(kernel_, grid_, kThreadsPerBlock, stream, data, words, sink);
}

}  // namespace swr
