#include "db/records.hpp"

#include <array>
#include <utility>

namespace swr::db {
namespace {

// The spellings are stored in the database: never change one.
constexpr std::array<std::pair<MeasurementStatus, std::string_view>, 6> kStatusNames = {{
    {MeasurementStatus::ok, "ok"},
    {MeasurementStatus::wrong_result, "wrong_result"},
    {MeasurementStatus::compile_error, "compile_error"},
    {MeasurementStatus::launch_error, "launch_error"},
    {MeasurementStatus::fault, "fault"},
    {MeasurementStatus::timeout, "timeout"},
}};

constexpr std::array<std::pair<CounterStatus, std::string_view>, 5> kCounterStatusNames = {{
    {CounterStatus::collected, "collected"},
    {CounterStatus::skipped_by_policy, "skipped_by_policy"},
    {CounterStatus::unavailable, "unavailable"},
    {CounterStatus::failed, "failed"},
    {CounterStatus::not_reached, "not_reached"},
}};

}  // namespace

std::string_view to_string(CounterStatus status) {
  for (const auto& [value, name] : kCounterStatusNames) {
    if (value == status) return name;
  }
  return "unknown";
}

std::optional<CounterStatus> parse_counter_status(std::string_view text) {
  for (const auto& [value, name] : kCounterStatusNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

CounterStatus derived_counter_status(const MeasurementRecord& record) {
  if (record.l2_sectors_from_tex || record.l2_sector_misses || record.l2_hit_rate ||
      record.dram_read_bytes || record.dram_write_bytes) {
    return CounterStatus::collected;
  }
  if (record.status != MeasurementStatus::ok) return CounterStatus::not_reached;
  return CounterStatus::unavailable;
}

GpuRecord GpuRecord::from_profile(const GpuProfile& profile) {
  GpuRecord record;
  record.name = profile.name;
  record.arch = profile.arch;
  record.sm_count = profile.sm_count;
  record.l2_bytes = profile.l2_bytes;
  record.device_name = profile.description;
  return record;
}

std::string_view to_string(MeasurementStatus status) {
  for (const auto& [value, name] : kStatusNames) {
    if (value == status) return name;
  }
  return "unknown";
}

std::optional<MeasurementStatus> parse_measurement_status(std::string_view text) {
  for (const auto& [value, name] : kStatusNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

}  // namespace swr::db
