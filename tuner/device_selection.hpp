// Which devices a tuning run measures on (`--devices all|0,2,5`), chosen among the present ones by
// rules that need no GPU to be tested: every device must be the GPU --gpu names, and all must be
// alike (same name, arch, SMs, L2 and SM clock), since one run tunes one profile. Explicit
// indexes that break a rule are refused; `all` takes the devices that are the named GPU and says
// which others it leaves out, and refuses a host whose devices of that GPU differ.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "swr/gpu_profile.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr {

struct DeviceSpec {
  std::string text;           // as given, for messages
  bool all = false;           // "all"
  std::vector<int> ordinals;  // "0,2,5", in the order given
};

// "all" or a comma-separated list of distinct device indexes; UsageError for anything else.
DeviceSpec parse_device_spec(const std::string& text);

struct DeviceSelection {
  std::vector<PresentDevice> devices;  // ordinal order
  std::string note;                    // what `all` left out and why; empty when nothing
};

// The devices to measure on. `spec` absent: the present device ($SWR_DEVICE, else 0) when it is
// the named GPU, else none (the run compiles and predicts). `no_device_reason` says why there is
// none at all, for the messages. UsageError for a spec the rules refuse.
DeviceSelection select_devices(const std::optional<DeviceSpec>& spec,
                               const std::vector<PresentDevice>& present, const GpuProfile& target,
                               int default_ordinal, const std::string& no_device_reason);

// "device 1 (NVIDIA H200, sm_90a, 132 SMs, 60 MiB L2, 1980 MHz)"
std::string describe_device(const PresentDevice& device);
// Same name, arch, SM count, L2 size and SM clock.
bool devices_alike(const PresentDevice& a, const PresentDevice& b);

}  // namespace swr
