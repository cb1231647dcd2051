// Random attention inputs made on the device: uniform(-1, 1) 16-bit values from a hash of
// (seed, index), so inputs of any size need no host transfer and a seed reproduces them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "swr/data_type.hpp"

namespace swr {

class HelperKernelModule;

class DeviceRandomFill {
 public:
  // Loads the fill kernel (compiled once per process) into the current context.
  explicit DeviceRandomFill(const DeviceContext& context);
  ~DeviceRandomFill();
  DeviceRandomFill(const DeviceRandomFill&) = delete;
  DeviceRandomFill& operator=(const DeviceRandomFill&) = delete;

  // Enqueues: `count` elements of `type` at `buffer`, each uniform in [-1, 1] (a 24-bit uniform
  // rounded to the type). The same seed gives the same values.
  void fill(CUdeviceptr buffer, std::size_t count, DataType type, std::uint64_t seed,
            CUstream stream) const;

 private:
  std::unique_ptr<HelperKernelModule> module_;
  CUfunction kernel_ = nullptr;
  unsigned grid_ = 0;
};

// A seed that differs on every call (random device, clock and a counter): fresh inputs per run.
std::uint64_t fresh_random_seed();

// The CUDA source of the fill kernel (tests compile it for several targets).
const char* random_fill_kernel_source();

}  // namespace swr
