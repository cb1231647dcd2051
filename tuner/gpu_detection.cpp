#include "tuner/gpu_detection.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "driver/device_identity.hpp"
#include "swr/usage_error.hpp"

namespace swr {

namespace {

std::string lowercase(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

// "NVIDIA RTX A6000" -> "nvidia-rtx-a6000": usable as a name on the command line and in files.
std::string profile_name_for(std::string_view device_name) {
  std::string name;
  for (char c : lowercase(device_name)) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      name += c;
    } else if (!name.empty() && name.back() != '-') {
      name += '-';
    }
  }
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name.empty() ? "unknown-gpu" : name;
}

// The built-in profile this device is, if any.
std::optional<GpuProfile> matching_builtin(const std::string& device_name, int major, int minor) {
  if (major == 9 && minor == 0) {
    if (device_name.find("H200") != std::string::npos) return find_gpu_profile("h200");
    if (device_name.find("H100") != std::string::npos) return find_gpu_profile("h100");
  }
  if (major == 12 && minor == 1) return find_gpu_profile("gb10");
  return std::nullopt;
}

struct DeviceReader {
  const CudaDriver& driver;
  CUdevice device;

  int attribute(CUdevice_attribute which) const {
    int value = 0;
    SWR_CU(driver, cuDeviceGetAttribute(&value, which, device));
    return value;
  }
};

GpuProfile read_device(const CudaDriver& driver, int ordinal) {
  CUdevice device = 0;
  SWR_CU(driver, cuDeviceGet(&device, ordinal));
  char name_buffer[256] = {};
  SWR_CU(driver, cuDeviceGetName(name_buffer, sizeof(name_buffer), device));
  const std::string device_name = name_buffer;
  const DeviceReader reader{driver, device};
  const int major = reader.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int minor = reader.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);

  GpuProfile profile;
  if (auto builtin = matching_builtin(device_name, major, minor)) {
    profile = *builtin;
  } else {
    profile.name = profile_name_for(device_name);
    // sm_90a unlocks wgmma/TMA; other archs compile for their plain target.
    profile.arch = "sm_" + std::to_string(major) + std::to_string(minor) +
                   (major == 9 && minor == 0 ? "a" : "");
    // Peak DRAM bandwidth: double data rate x bus width. The tensor peak is not reported by the
    // driver and stays 0 (unknown) for devices without a built-in profile.
    const double memory_clock_hz = reader.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) * 1e3;
    const double bus_bytes = reader.attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) / 8.0;
    profile.dram_bytes_per_second = 2.0 * memory_clock_hz * bus_bytes;
  }
  // The device's own numbers win over the profile's (e.g. a cut-down part or a MIG slice).
  profile.description = device_name;
  profile.compute_major = major;
  profile.compute_minor = minor;
  profile.sm_count = reader.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  profile.l2_bytes = reader.attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  profile.shared_memory_per_block_optin =
      reader.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  profile.shared_memory_per_sm =
      reader.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  profile.registers_per_sm = reader.attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  profile.max_threads_per_sm = reader.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  profile.max_blocks_per_sm = reader.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  return profile;
}

}  // namespace

std::optional<GpuProfile> detect_present_gpu() {
  const CudaDriver* driver = CudaDriver::try_get();
  if (driver == nullptr) return std::nullopt;
  const int ordinal = selected_device_ordinal();
  if (ordinal >= cuda_device_count()) return std::nullopt;
  return read_device(*driver, ordinal);
}

std::vector<PresentDevice> present_devices() {
  std::vector<PresentDevice> devices;
  const CudaDriver* driver = CudaDriver::try_get();
  if (driver == nullptr) return devices;
  for (int ordinal = 0; ordinal < cuda_device_count(); ++ordinal) {
    PresentDevice present;
    present.ordinal = ordinal;
    present.profile = read_device(*driver, ordinal);
    CUdevice device = 0;
    SWR_CU(*driver, cuDeviceGet(&device, ordinal));
    present.uuid = device_uuid(device);
    // 0 where a driver no longer reports it: then only the rest tells devices apart.
    if (driver->cuDeviceGetAttribute(&present.clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device) !=
        CUDA_SUCCESS) {
      present.clock_khz = 0;
    }
    devices.push_back(std::move(present));
  }
  return devices;
}

std::string no_present_gpu_reason() {
  std::string driver_error = CudaDriver::load_error();
  if (!driver_error.empty()) return driver_error;
  const int count = cuda_device_count();
  const int ordinal = selected_device_ordinal();
  if (ordinal < count) return {};
  return count == 0 ? "the driver reports no device"
                    : "device " + std::to_string(ordinal) + " requested ($SWR_DEVICE), " +
                          std::to_string(count) + " present";
}

bool is_auto_gpu(std::string_view name) {
  return lowercase(name) == "auto";
}

GpuProfile resolve_gpu(std::string_view name) {
  if (is_auto_gpu(name)) {
    if (auto present = detect_present_gpu()) return *present;
    throw NoDeviceError(no_present_gpu_reason());
  }
  if (auto profile = find_gpu_profile(name)) return *profile;
  throw UsageError("unknown GPU '" + std::string(name) + "': allowed " + gpu_profile_names());
}

bool is_same_gpu(const GpuProfile& present, const GpuProfile& target) {
  return present.name == target.name && present.arch == target.arch;
}

}  // namespace swr
