// Which of a tuned backward shape's variants serve a caller (DqRequirement): any, the fastest
// valid; deterministic, the fastest valid one whose dQ is deterministic. The database catalog,
// the export catalog and `swr-tune export` choose by this alike.
#pragma once

#include <optional>

#include "db/results_database.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

bool meets(const AttentionBackwardConfig& config, DqRequirement dq);

// From a results database: with `any` best_for (of any family), with `deterministic` the fastest
// valid backward variant whose dQ is deterministic (by its config's newest measurement, as
// measurements_for ranks them).
std::optional<db::StoredMeasurement> best_measurement_meeting(const db::ResultsDatabase& database,
                                                              db::GpuId gpu, db::ProblemId problem,
                                                              DqRequirement dq);

}  // namespace swr
