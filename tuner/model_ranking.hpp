// The L2 model's answer where the GPU is not here: predictions for every variant, with occupancy
// from the compiled kernels' registers, printed as a ranking and stored in the database's
// predictions table (never as measurements).
#pragma once

#include <filesystem>
#include <vector>

#include "generator/parallel_compiler.hpp"
#include "model/model_prediction.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

// Names the model in the predictions table; bump the version whenever its answers may change.
inline constexpr const char* kScheduleModelName = "schedule_simulator";
inline constexpr const char* kScheduleModelVersion = "2";

// ptxas's register count per config (-1 for a variant that failed to compile or is missing).
std::vector<int> compiled_registers(const std::vector<AttentionConfig>& configs,
                                    const std::vector<CompileResult>& results);

// Compiles `configs` through the cubin cache without per-variant lines (a note on stderr says
// why), for their registers. NVRTC missing: estimates, said once on stderr.
std::vector<int> registers_by_compiling(const Target& target,
                                        const std::vector<AttentionConfig>& configs,
                                        const CompileSettings& settings);

// Stores one prediction row per runnable variant; returns how many.
int store_predictions(const std::filesystem::path& database, const Target& target,
                      const std::vector<model::ModelPrediction>& predictions);

}  // namespace swr
