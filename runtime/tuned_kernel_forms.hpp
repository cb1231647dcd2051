// A tuned kernel of every family made from what a results database or an export manifest holds,
// and their JSON form (as `swr-tune query --json` prints it).
#pragma once

#include <nlohmann/json.hpp>

#include "db/records.hpp"
#include "runtime/export_manifest.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

MeasuredFigures measured_figures(const db::MeasurementRecord& record);

// `stored` is the best measurement of `problem` on `gpu`. Throws UsageError for a config JSON
// this build cannot read.
TunedKernel tuned_kernel_from_database(const db::GpuRecord& gpu, const AttentionProblem& problem,
                                       const db::StoredMeasurement& stored);
TunedGemmKernel tuned_kernel_from_database(const db::GpuRecord& gpu, const GemmProblem& problem,
                                           const db::StoredMeasurement& stored);
TunedAttentionBackwardKernel tuned_kernel_from_database(const db::GpuRecord& gpu,
                                                        const AttentionBackwardProblem& problem,
                                                        const db::StoredMeasurement& stored);
TunedKernel tuned_kernel_from_export(const ExportedKernel& exported);
TunedGemmKernel tuned_kernel_from_export(const ExportedGemmKernel& exported);
TunedAttentionBackwardKernel tuned_kernel_from_export(const ExportedBackwardKernel& exported);

nlohmann::json tuned_kernel_json(const TunedKernel& kernel);
nlohmann::json tuned_kernel_json(const TunedGemmKernel& kernel);
nlohmann::json tuned_kernel_json(const TunedAttentionBackwardKernel& kernel);
// {"family", "asked", "match", and "distance", "tuned_shape", "kernel" or "why"}.
nlohmann::json tuned_choice_json(const TunedChoice& choice, const AttentionProblem& asked);
nlohmann::json tuned_choice_json(const TunedGemmChoice& choice, const GemmProblem& asked);
nlohmann::json tuned_choice_json(const TunedBackwardChoice& choice,
                                 const AttentionBackwardProblem& asked);

}  // namespace swr
