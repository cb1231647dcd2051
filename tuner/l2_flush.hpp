// Empties L2 of everything the measured kernel could reuse: a kernel reads a buffer of twice the
// L2 size. Launched between timed runs (every run starts cold) and inside every CUPTI replay pass
// (CUPTI 13.0's Range Profiler has no cache control, unlike ncu --cache-control all).
#pragma once

#include <cstdint>
#include <memory>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"

namespace swr {

class HelperKernelModule;

class L2Flush {
 public:
  // The kernel's name: the profiler sees the flush as a range of its own and skips it by name.
  static constexpr const char* kKernelName = "swr_l2_flush";

  // Allocates the buffer on the context's device (2 x its L2 size unless `buffer_bytes` > 0) and
  // loads the flush kernel, compiled once per process. The context must be current.
  explicit L2Flush(const DeviceContext& context, std::int64_t buffer_bytes = 0);
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;

  // Enqueues the flush on `stream`; returns at once.
  void launch(CUstream stream) const;

  std::int64_t l2_bytes() const { return l2_bytes_; }
  std::int64_t buffer_bytes() const { return buffer_bytes_; }

 private:
  const CudaDriver& driver_;
  std::unique_ptr<HelperKernelModule> module_;
  CUfunction kernel_ = nullptr;
  std::int64_t l2_bytes_ = 0;
  std::int64_t buffer_bytes_ = 0;
  CUdeviceptr buffer_ = 0;
  CUdeviceptr sink_ = 0;
  unsigned grid_ = 0;
};

// The CUDA source of the flush kernel and of `swr_l2_read`, the same pass under a name the
// profiler measures (tests compile it for several targets and read through it).
const char* l2_flush_kernel_source();

}  // namespace swr
