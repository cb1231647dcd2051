#include "driver/device_identity.hpp"

#include <cctype>

#include "driver/cuda_driver.hpp"

namespace swr {

std::string gpu_name_for_device(const std::string& device_name, int major, int minor) {
  // The same mapping as tuner/gpu_detection.cpp's matching_builtin and profile_name_for.
  if (major == 9 && minor == 0) {
    if (device_name.find("H200") != std::string::npos) return "h200";
    if (device_name.find("H100") != std::string::npos) return "h100";
  }
  if (major == 12 && minor == 1) return "gb10";
  std::string name;
  for (char c : device_name) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte)) {
      name += static_cast<char>(std::tolower(byte));
    } else if (!name.empty() && name.back() != '-') {
      name += '-';
    }
  }
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name.empty() ? "unknown-gpu" : name;
}

std::string DeviceIdentity::description() const {
  return device_name + " (" + gpu_name + ", compute " + std::to_string(compute_major) + "." +
         std::to_string(compute_minor) + ", " + std::to_string(sm_count) + " SMs)";
}

DeviceIdentity identify_device(CUdevice device) {
  const CudaDriver& driver = CudaDriver::get();
  auto attribute = [&](CUdevice_attribute which) {
    int value = 0;
    SWR_CU(driver, cuDeviceGetAttribute(&value, which, device));
    return value;
  };
  char name[256] = {};
  SWR_CU(driver, cuDeviceGetName(name, sizeof(name), device));
  DeviceIdentity identity;
  identity.device_name = name;
  identity.compute_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  identity.compute_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  identity.sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  identity.l2_bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  identity.gpu_name =
      gpu_name_for_device(identity.device_name, identity.compute_major, identity.compute_minor);
  return identity;
}

}  // namespace swr
