// Which GPU a CUDA device is, for the catalog lookup: named as tuner/gpu_detection.cpp names the
// present device (so that a kernel tuned with --gpu h200 or --gpu auto is found), with its compute
// capability for the arch check and its counts for the grid; and which devices a cubin's arch
// runs on.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

// The device's UUID in nvidia-smi's form, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (DriverError
// on failure): what tells two devices apart whatever CUDA_VISIBLE_DEVICES numbers them.
std::string device_uuid(CUdevice device);

// Reads the device's attributes through the driver (NoDeviceError / DriverError on failure).
DeviceIdentity identify_device(CUdevice device);

// Which devices a cubin can run on. A cubin for sm_XY runs on compute capability X.Z with Z >= Y;
// one for the arch-specific sm_XYa (wgmma, setmaxnreg) on X.Y only; one for the family-specific
// sm_XYf on X.Z with Z >= Y. Nothing runs across major versions: a cubin is machine code.
struct CubinArch {
  int major = 0;
  int minor = 0;
  char variant = '\0';  // '\0', 'a' (arch-specific) or 'f' (family-specific)
};

// "sm_90a" -> {9, 0, 'a'}; nullopt for anything else, including archs CUDA 13 does not compile
// for.
std::optional<CubinArch> parse_cubin_arch(std::string_view arch);

// "sm_75, sm_80, ..., sm_121 (each also with an a or f suffix)": for error messages.
std::string known_cubin_archs();

// Why a device of compute capability major.minor cannot run a cubin for `arch` ("a cubin for
// sm_90a runs on compute capability 9.0 only; this device is 12.1"), or empty when it can.
std::string cubin_arch_mismatch(std::string_view arch, int major, int minor);

}  // namespace swr
