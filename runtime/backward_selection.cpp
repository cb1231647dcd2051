#include "runtime/backward_selection.hpp"

namespace swr {

bool meets(const AttentionBackwardConfig& config, DqRequirement dq) {
  return dq == DqRequirement::any || config.dq == DqAccumulation::deterministic;
}

std::optional<db::StoredMeasurement> best_measurement_meeting(const db::ResultsDatabase& database,
                                                              db::GpuId gpu, db::ProblemId problem,
                                                              DqRequirement dq) {
  if (dq == DqRequirement::any) return database.best_for(gpu, problem);
  for (db::StoredMeasurement& measured : database.measurements_for(gpu, problem)) {
    if (measured.record.status != db::MeasurementStatus::ok) continue;
    const auto config = AttentionBackwardConfig::from_key(measured.config_key);
    if (config && meets(*config, dq)) return std::move(measured);
  }
  return std::nullopt;
}

}  // namespace swr
