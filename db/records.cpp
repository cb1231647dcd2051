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

}  // namespace

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
