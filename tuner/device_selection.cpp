#include "tuner/device_selection.hpp"

#include <algorithm>
#include <charconv>

#include "swr/usage_error.hpp"

namespace swr {
namespace {

constexpr const char* kAllowedSpec =
    "allowed all, or device indexes separated by commas such as 0,2,5 (each once)";

std::string ordinal_list(const std::vector<PresentDevice>& devices) {
  std::string text;
  for (const PresentDevice& device : devices) {
    if (!text.empty()) text += ',';
    text += std::to_string(device.ordinal);
  }
  return text;
}

// The devices grouped by likeness, in ordinal order of each group's first.
std::vector<std::vector<PresentDevice>> alike_groups(const std::vector<PresentDevice>& devices) {
  std::vector<std::vector<PresentDevice>> groups;
  for (const PresentDevice& device : devices) {
    auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& members) {
      return devices_alike(members.front(), device);
    });
    if (group == groups.end()) {
      groups.push_back({device});
    } else {
      group->push_back(device);
    }
  }
  return groups;
}

std::string here(const std::vector<PresentDevice>& present, const std::string& no_device_reason) {
  if (present.empty()) return "this machine has none (" + no_device_reason + ")";
  std::string text = "this machine has " + std::to_string(present.size()) + ": ";
  for (std::size_t i = 0; i < present.size(); ++i) {
    if (i > 0) text += "; ";
    text += describe_device(present[i]);
  }
  return text;
}

}  // namespace

std::string describe_device(const PresentDevice& device) {
  const GpuProfile& p = device.profile;
  return "device " + std::to_string(device.ordinal) + " (" + p.description + ", " + p.arch + ", " +
         std::to_string(p.sm_count) + " SMs, " + std::to_string(p.l2_bytes >> 20) + " MiB L2, " +
         std::to_string(device.clock_khz / 1000) + " MHz)";
}

bool devices_alike(const PresentDevice& a, const PresentDevice& b) {
  return a.profile.name == b.profile.name && a.profile.description == b.profile.description &&
         a.profile.arch == b.profile.arch && a.profile.sm_count == b.profile.sm_count &&
         a.profile.l2_bytes == b.profile.l2_bytes && a.clock_khz == b.clock_khz;
}

DeviceSpec parse_device_spec(const std::string& text) {
  DeviceSpec spec;
  spec.text = text;
  if (text == "all") {
    spec.all = true;
    return spec;
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int ordinal = -1;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), ordinal);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || ordinal < 0) {
      throw UsageError("bad --devices '" + text + "': '" + item +
                       "' is no device index: " + kAllowedSpec);
    }
    if (std::find(spec.ordinals.begin(), spec.ordinals.end(), ordinal) != spec.ordinals.end()) {
      throw UsageError("bad --devices '" + text + "': device " + item +
                       " given twice: " + kAllowedSpec);
    }
    spec.ordinals.push_back(ordinal);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return spec;
}

DeviceSelection select_devices(const std::optional<DeviceSpec>& spec,
                               const std::vector<PresentDevice>& present, const GpuProfile& target,
                               int default_ordinal, const std::string& no_device_reason) {
  DeviceSelection selection;
  const auto is_target = [&](const PresentDevice& device) {
    return is_same_gpu(device.profile, target);
  };
  if (!spec) {
    // As before --devices existed: the selected device when it is the named GPU, else none.
    for (const PresentDevice& device : present) {
      if (device.ordinal == default_ordinal && is_target(device)) selection.devices = {device};
    }
    return selection;
  }

  const std::string bad = "bad --devices '" + spec->text + "': ";
  if (spec->all) {
    std::vector<PresentDevice> matching, others;
    for (const PresentDevice& device : present)
      (is_target(device) ? matching : others).push_back(device);
    if (matching.empty()) {
      throw UsageError(bad + "no " + target.name + " here, " + here(present, no_device_reason) +
                       ": allowed --devices on a machine with the GPU --gpu names");
    }
    const std::vector<std::vector<PresentDevice>> groups = alike_groups(matching);
    if (groups.size() > 1) {
      std::string kinds;
      for (const auto& group : groups) {
        if (!kinds.empty()) kinds += " and ";
        kinds += ordinal_list(group) + " (" + describe_device(group.front()) + ")";
      }
      throw UsageError(bad + "the " + target.name + " devices here differ: " + kinds +
                       ": allowed identical GPUs in one run, e.g. --devices " +
                       ordinal_list(groups.front()));
    }
    if (!others.empty()) {
      selection.note = "devices " + ordinal_list(others) + " are not the " + target.name +
                       " (e.g. " + describe_device(others.front()) + "): left out";
    }
    selection.devices = matching;
    return selection;
  }

  for (int ordinal : spec->ordinals) {
    const auto found = std::find_if(present.begin(), present.end(),
                                    [&](const PresentDevice& d) { return d.ordinal == ordinal; });
    if (found == present.end()) {
      throw UsageError(bad + "there is no device " + std::to_string(ordinal) + ": " +
                       here(present, no_device_reason));
    }
    if (!is_target(*found)) {
      throw UsageError(bad + describe_device(*found) + " is a " + found->profile.name +
                       ", not the " + target.name + " --gpu names: allowed devices " +
                       (std::any_of(present.begin(), present.end(), is_target)
                            ? "of that GPU"
                            : "of that GPU, and this machine has none"));
    }
    if (!selection.devices.empty() && !devices_alike(selection.devices.front(), *found)) {
      throw UsageError(bad + describe_device(*found) + " differs from " +
                       describe_device(selection.devices.front()) +
                       ": allowed identical GPUs in one run");
    }
    selection.devices.push_back(*found);
  }
  std::sort(selection.devices.begin(), selection.devices.end(),
            [](const PresentDevice& a, const PresentDevice& b) { return a.ordinal < b.ordinal; });
  return selection;
}

}  // namespace swr
