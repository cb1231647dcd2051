#include "db/gpu_record.hpp"

namespace swr::db {

GpuRecord GpuRecord::from_profile(const GpuProfile& profile) {
  GpuRecord record;
  record.name = profile.name;
  record.arch = profile.arch;
  record.sm_count = profile.sm_count;
  record.l2_bytes = profile.l2_bytes;
  record.device_name = profile.description;
  return record;
}

}  // namespace swr::db
