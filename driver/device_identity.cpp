#include "driver/device_identity.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

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

std::string device_uuid(CUdevice device) {
  const CudaDriver& driver = CudaDriver::get();
  CUuuid uuid{};
  SWR_CU(driver, cuDeviceGetUuid(&uuid, device));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    const auto byte = static_cast<unsigned char>(uuid.bytes[i]);
    text += kHex[byte >> 4];
    text += kHex[byte & 15];
  }
  return text;
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

namespace {

// The real architectures CUDA 13's NVRTC accepts (sm_7x below 7.5 were dropped in 13.0).
constexpr int kKnownArchs[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};

std::string capability(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace

std::optional<CubinArch> parse_cubin_arch(std::string_view arch) {
  if (arch.substr(0, 3) != "sm_") return std::nullopt;
  std::string_view rest = arch.substr(3);
  CubinArch parsed;
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    parsed.variant = rest.back();
    rest.remove_suffix(1);
  }
  if (rest.size() < 2 || rest.size() > 3) return std::nullopt;
  int number = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), number);
  if (error != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
  if (std::find(std::begin(kKnownArchs), std::end(kKnownArchs), number) == std::end(kKnownArchs)) {
    return std::nullopt;
  }
  parsed.major = number / 10;
  parsed.minor = number % 10;
  return parsed;
}

std::string known_cubin_archs() {
  std::string text;
  for (int number : kKnownArchs) text += (text.empty() ? "sm_" : ", sm_") + std::to_string(number);
  return text + " (each also with an a or f suffix)";
}

std::string cubin_arch_mismatch(std::string_view arch, int major, int minor) {
  const std::optional<CubinArch> parsed = parse_cubin_arch(arch);
  if (parsed) {
    const bool same_minor_or_newer = major == parsed->major && minor >= parsed->minor;
    const bool runs = parsed->variant == 'a' ? major == parsed->major && minor == parsed->minor
                                             : same_minor_or_newer;
    if (runs) return {};
  }
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string device = "this device is compute capability ";
  device += capability(major, minor);
  std::string message = parsed ? "a cubin for " : "'";
  message += arch;
  if (!parsed) return message + "' is not a known cubin arch; " + device;
  if (parsed->variant == 'a') {
    return message + " runs on compute capability " + capability(parsed->major, parsed->minor) +
           " only; " + device;
  }
  return message + " runs on compute capability " + std::to_string(parsed->major) +
         ".x with x >= " + std::to_string(parsed->minor) + "; " + device;
}

}  // namespace swr
