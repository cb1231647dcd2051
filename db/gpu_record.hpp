// A GPU as the results database knows it. The identity is the hardware (name, arch, SM count,
// L2 size, device name): a driver or CUDA upgrade keeps the GPU's results, and the versions seen
// last are kept beside it (each measurement also stores the versions it ran under).
#pragma once

#include <cstdint>
#include <string>

#include "db/database_ids.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::db {

struct GpuRecord {
  std::string name;  // profile name: "h200", "gb10", ...
  std::string arch;  // "sm_90a"
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  std::string device_name;  // the device's own name, or the profile's description without one
  std::string driver_version;
  std::string cuda_version;

  // Name, arch, SM count, L2 size and device name (the profile's description) from a profile;
  // the versions are left for the caller to fill.
  static GpuRecord from_profile(const GpuProfile& profile);

  bool operator==(const GpuRecord&) const = default;
};

struct StoredGpu {
  GpuId id{};
  GpuRecord gpu;
};

}  // namespace swr::db
