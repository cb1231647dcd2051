#include "swr/device_buffer.hpp"

#include <stdexcept>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "driver/device_identity.hpp"

namespace swr {
namespace {

void require_fits(std::size_t bytes, std::size_t size, const char* operation) {
  if (bytes > size) {
    throw std::invalid_argument(std::string(operation) + ": " + std::to_string(bytes) +
                                " bytes do not fit a buffer of " + std::to_string(size));
  }
}

}  // namespace

bool cuda_device_present(std::string* why) {
  std::string reason = CudaDriver::load_error();
  if (reason.empty()) {
    const int count = cuda_device_count();
    const int ordinal = selected_device_ordinal();
    if (ordinal >= count) {
      reason = count == 0 ? "the driver reports no device"
                          : "device " + std::to_string(ordinal) + " requested ($SWR_DEVICE), " +
                                std::to_string(count) + " present";
    }
  }
  if (why != nullptr) *why = reason;
  return reason.empty();
}

std::string current_device_description() {
  return identify_device(current_context().device).description();
}

void synchronize(StreamHandle stream) {
  current_context();
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuStreamSynchronize(static_cast<CUstream>(stream)));
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  current_context();
  const CudaDriver& driver = CudaDriver::get();
  CUdeviceptr pointer = 0;
  SWR_CU(driver, cuMemAlloc(&pointer, bytes == 0 ? 1 : bytes));
  pointer_ = pointer;
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_ != 0) CudaDriver::get().cuMemFree(pointer_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(other.pointer_), bytes_(other.bytes_) {
  other.pointer_ = 0;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (pointer_ != 0) CudaDriver::get().cuMemFree(pointer_);
    pointer_ = other.pointer_;
    bytes_ = other.bytes_;
    other.pointer_ = 0;
    other.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::copy_from_host(const void* host, std::size_t bytes) {
  require_fits(bytes, bytes_, "DeviceBuffer::copy_from_host");
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuMemcpyHtoD(pointer_, host, bytes));
}

void DeviceBuffer::copy_to_host(void* host, std::size_t bytes) const {
  require_fits(bytes, bytes_, "DeviceBuffer::copy_to_host");
  const CudaDriver& driver = CudaDriver::get();
  SWR_CU(driver, cuMemcpyDtoH(host, pointer_, bytes));
}

}  // namespace swr
