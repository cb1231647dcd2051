// Which GPU a command targets: a built-in profile by name, or the device present on this machine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "swr/gpu_profile.hpp"

namespace swr {

// The present device (ordinal $SWR_DEVICE or 0) as a profile, or nullopt when there is no driver
// or no device. A device that matches a built-in profile (H100, H200, GB10) gets that profile's
// name, arch, bandwidth and peak, with the device's own counts (SMs, L2, shared memory, ...);
// any other device gets a profile named after it.
std::optional<GpuProfile> detect_present_gpu();

// One CUDA device of this machine, as a tuning run chooses among them (device_selection.hpp).
struct PresentDevice {
  int ordinal = 0;   // CUDA's, as this process numbers them (after CUDA_VISIBLE_DEVICES)
  std::string uuid;  // "GPU-5c3b...", as nvidia-smi -L shows it: what the per-GPU lock is keyed by
  GpuProfile profile;
  int clock_khz = 0;  // the SM clock the driver reports: with the profile, what makes two alike
};

// Every device of this machine (empty when there is no driver or no device).
std::vector<PresentDevice> present_devices();

// Why detect_present_gpu() found nothing, e.g. "cannot load libcuda.so.1 (...)"; empty when a
// device is present.
std::string no_present_gpu_reason();

// A built-in profile by name (case-insensitive), or the present device for "auto".
// Throws UsageError for an unknown name and NoDeviceError for "auto" without a device.
GpuProfile resolve_gpu(std::string_view name);

// True for the name resolve_gpu takes as the present device: "auto", in any case.
bool is_auto_gpu(std::string_view name);

// True when `present` is the device `target` names (same profile name and arch).
bool is_same_gpu(const GpuProfile& present, const GpuProfile& target);

}  // namespace swr
