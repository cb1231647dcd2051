// A measurement with its GPU, problem and config named by identity instead of row ids, so that it
// can move from one results database into another (import) or into an export manifest. Row ids
// mean nothing outside their file; identities (GPU hardware, problem key, config key) do.
#pragma once

#include <cstddef>
#include <string>
#include <variant>

#include "db/gpu_record.hpp"
#include "db/measurement_record.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr::db {

struct PortableMeasurement {
  GpuRecord gpu;
  // Of one family: an AttentionProblem with an AttentionConfig, or a GemmProblem with a
  // GemmConfig (import refuses a mixed pair).
  std::variant<AttentionProblem, GemmProblem> problem;
  std::variant<AttentionConfig, GemmConfig> config;
  // The figures; its ids are ignored, measured_at must be set (the time is part of the fact).
  MeasurementRecord record;
};

// "attention" or "gemm", and the problem's key, whichever the family.
const char* family_of(const PortableMeasurement& measurement);
std::string problem_key(const PortableMeasurement& measurement);

// What an import did.
struct ImportCounts {
  std::size_t added = 0;            // measurements written
  std::size_t already_present = 0;  // identical measurements the database held already
};

}  // namespace swr::db
