// A measurement with its GPU, problem and config named by identity instead of row ids, so that it
// can move from one results database into another (import) or into an export manifest. Row ids
// mean nothing outside their file; identities (GPU hardware, problem key, config key) do.
#pragma once

#include <cstddef>

#include "db/gpu_record.hpp"
#include "db/measurement_record.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"

namespace swr::db {

struct PortableMeasurement {
  GpuRecord gpu;
  AttentionProblem problem;  // the attention family; other families are not portable yet
  AttentionConfig config;
  // The figures; its ids are ignored, measured_at must be set (the time is part of the fact).
  MeasurementRecord record;
};

// What an import did.
struct ImportCounts {
  std::size_t added = 0;            // measurements written
  std::size_t already_present = 0;  // identical measurements the database held already
};

}  // namespace swr::db
