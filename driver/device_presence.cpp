#include "driver/device_presence.hpp"

#include <regex>
#include <system_error>

#include "driver/cuda_driver.hpp"

namespace swr {

namespace {

bool has_entries(const std::filesystem::path& directory) {
  std::error_code error;
  return std::filesystem::is_directory(directory, error) &&
         std::filesystem::directory_iterator(directory, error) !=
             std::filesystem::directory_iterator();
}

// /dev/nvidia0, /dev/nvidia1, ...: one per GPU (nvidiactl and nvidia-uvm exist without one).
bool has_gpu_character_device(const std::filesystem::path& dev) {
  static const std::regex gpu_node("nvidia[0-9]+");
  std::error_code error;
  if (!std::filesystem::is_directory(dev, error)) return false;
  for (const auto& entry : std::filesystem::directory_iterator(dev, error)) {
    if (!std::regex_match(entry.path().filename().string(), gpu_node)) continue;
    if (std::filesystem::is_character_file(entry.status(error))) return true;
  }
  return false;
}

}  // namespace

bool nvidia_hardware_present(const std::filesystem::path& root) {
  return has_entries(root / "proc/driver/nvidia/gpus") || has_gpu_character_device(root / "dev");
}

std::string driver_unusable_reason() {
  const CudaDriver* driver = CudaDriver::try_get();
  if (driver == nullptr) return CudaDriver::load_error();
  int count = 0;
  try {
    SWR_CU(*driver, cuDeviceGetCount(&count));
  } catch (const DriverError& error) {
    return error.what();
  }
  if (count == 0) return "the CUDA driver loaded but counts no device";
  return {};
}

}  // namespace swr
