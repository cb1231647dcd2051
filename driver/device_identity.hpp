// Which GPU a CUDA device is, for the catalog lookup: named as tuner/gpu_detection.cpp names the
// present device (so that a kernel tuned with --gpu h200 or --gpu auto is found), with its compute
// capability for the arch check and its counts for the grid.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace swr {

struct DeviceIdentity {
  std::string gpu_name;  // "h200", "h100", "gb10", else from the device name ("nvidia-rtx-a6000")
  std::string device_name;  // "NVIDIA H200"
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;

  // "NVIDIA H200 (h200, compute 9.0, 132 SMs)"
  std::string description() const;
};

// The profile name a device gets: a built-in one when the device is an H100, H200 or GB10, else
// its name in lower case with runs of other characters as '-'.
std::string gpu_name_for_device(const std::string& device_name, int major, int minor);

// Reads the device's attributes through the driver (NoDeviceError / DriverError on failure).
DeviceIdentity identify_device(CUdevice device);

}  // namespace swr
