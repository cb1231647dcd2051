// Device memory for host programs that use swr::Attention or swr::Gemm without the CUDA toolkit's
// libraries: allocation and synchronous copies through the driver swr loads at run time.
#pragma once

#include <cstddef>
#include <string>

#include "swr/export.h"
#include "swr/runtime_options.hpp"

namespace swr {

// True when a CUDA driver and the device $SWR_DEVICE (else 0) are present; otherwise `why` (when
// given) receives the reason.
SWR_API bool cuda_device_present(std::string* why = nullptr);

// "NVIDIA H200, compute 9.0, 132 SMs" for the device of the current context (made current as in
// Attention::run and Gemm::run).
SWR_API std::string current_device_description();

// Waits for everything enqueued on `stream` (nullptr: the legacy default stream).
SWR_API void synchronize(StreamHandle stream = nullptr);

// Bytes on the device of the current context (made current as in Attention::run and Gemm::run),
// freed on destruction.
class SWR_API DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  DevicePointer pointer() const { return pointer_; }
  std::size_t size() const { return bytes_; }

  // Synchronous copies of `bytes` (at most size()); they wait for work on the legacy default
  // stream, not for other streams: synchronize() those first.
  void copy_from_host(const void* host, std::size_t bytes);
  void copy_to_host(void* host, std::size_t bytes) const;

 private:
  DevicePointer pointer_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace swr
