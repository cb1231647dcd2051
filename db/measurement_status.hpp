// The outcome of measuring one variant. Failures are results too: they are stored (so a resumed
// run does not retry them) and are never chosen as best.
#pragma once

#include <optional>
#include <string_view>

namespace swr::db {

enum class MeasurementStatus {
  ok,             // verified against the reference and timed
  wrong_result,   // ran, but the output failed the comparison (NaN included)
  compile_error,  // NVRTC refused the source
  launch_error,   // the driver refused to load or launch it
  fault,          // illegal address, trap, ... (the worker's context died)
  timeout,        // ran past the time limit
};

std::string_view to_string(MeasurementStatus status);
std::optional<MeasurementStatus> parse_measurement_status(std::string_view text);

}  // namespace swr::db
