#include "model/model_profile.hpp"

#include <cmath>
#include <string>

#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kGiB = 1024 * 1024 * 1024;

std::string profile_label(const GpuProfile& gpu) {
  return "GPU profile '" + (gpu.name.empty() ? std::string("unnamed") : gpu.name) + "': ";
}

void require_range(const GpuProfile& gpu, const char* what, double value, double low, double high,
                   const std::string& shown) {
  // NaN fails both comparisons, so it is refused too.
  if (!(value >= low && value <= high)) {
    throw UsageError(profile_label(gpu) + what + " " + shown +
                     " is out of range (allowed: " + std::to_string(static_cast<long long>(low)) +
                     " to " + std::to_string(static_cast<long long>(high)) + ")");
  }
}

void require_range(const GpuProfile& gpu, const char* what, std::int64_t value, std::int64_t low,
                   std::int64_t high) {
  require_range(gpu, what, static_cast<double>(value), static_cast<double>(low),
                static_cast<double>(high), std::to_string(value));
}

}  // namespace

void validate_model_profile(const GpuProfile& gpu) {
  require_range(gpu, "sm_count", gpu.sm_count, 1, 1024);
  require_range(gpu, "l2_bytes", gpu.l2_bytes, kKiB, kGiB);
  const int sector = gpu.l2_sector_bytes;
  if (sector != 32 && sector != 64 && sector != 128) {
    throw UsageError(profile_label(gpu) + "l2_sector_bytes " + std::to_string(sector) +
                     " is not supported (allowed: 32, 64, 128)");
  }
  require_range(gpu, "l2_partitions", gpu.l2_partitions, 1, 8);
  if (gpu.l2_bytes / gpu.l2_partitions < 16 * sector) {
    throw UsageError(profile_label(gpu) + "l2_bytes " + std::to_string(gpu.l2_bytes) +
                     " holds fewer than 16 sectors per partition");
  }
  if (!(gpu.l2_shared_miss_factor >= 1.0 && gpu.l2_shared_miss_factor <= gpu.l2_partitions)) {
    throw UsageError(profile_label(gpu) + "l2_shared_miss_factor " +
                     std::to_string(gpu.l2_shared_miss_factor) +
                     " is out of range (allowed: 1 to " + std::to_string(gpu.l2_partitions) +
                     ", the partition count)");
  }
  if (!(gpu.l2_first_touch_miss_factor >= 1.0 &&
        gpu.l2_first_touch_miss_factor <= gpu.l2_partitions)) {
    throw UsageError(profile_label(gpu) + "l2_first_touch_miss_factor " +
                     std::to_string(gpu.l2_first_touch_miss_factor) +
                     " is out of range (allowed: 1 to " + std::to_string(gpu.l2_partitions) +
                     ", the partition count)");
  }
  if (!(gpu.l2_peer_fill_miss_weight >= 0.0 && gpu.l2_peer_fill_miss_weight <= 1.0)) {
    throw UsageError(profile_label(gpu) + "l2_peer_fill_miss_weight " +
                     std::to_string(gpu.l2_peer_fill_miss_weight) +
                     " is out of range (allowed: 0 to 1)");
  }
  require_range(gpu, "max_blocks_per_sm", gpu.max_blocks_per_sm, 1, 64);
  require_range(gpu, "max_threads_per_sm", gpu.max_threads_per_sm, 32, 4096);
  require_range(gpu, "registers_per_sm", gpu.registers_per_sm, 1024, 1 << 20);
  require_range(gpu, "shared_memory_per_sm", gpu.shared_memory_per_sm, 0, 16 * 1024 * kKiB);
  require_range(gpu, "shared_memory_per_block_optin", gpu.shared_memory_per_block_optin, 0,
                16 * 1024 * kKiB);
  // 1 GB/s to 1 PB/s; a peak of 0 means "unknown" (auto-detected devices) and gives a
  // bandwidth-only time estimate.
  require_range(gpu, "dram_bytes_per_second", gpu.dram_bytes_per_second, 1e9, 1e15,
                std::to_string(gpu.dram_bytes_per_second));
  if (gpu.peak_tensor_flops != 0) {
    require_range(gpu, "peak_tensor_flops", gpu.peak_tensor_flops, 1e9, 1e18,
                  std::to_string(gpu.peak_tensor_flops));
  }
}

std::int64_t usable_l2_bytes(const GpuProfile& gpu) {
  return gpu.l2_bytes / gpu.l2_partitions;
}

}  // namespace swr::model
