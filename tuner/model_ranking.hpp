// The model's answer where the GPU is not here: predictions for every variant of either family,
// with occupancy from the compiled kernels' registers, printed as a ranking and stored in the
// database's predictions table (never as measurements).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generator/parallel_compiler.hpp"
#include "model/backward_prediction.hpp"
#include "model/gemm_prediction.hpp"
#include "model/model_prediction.hpp"
#include "tuner/gemm_compilation.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

// Names the model in the predictions table; bump the version whenever its answers may change
// (3: times from the time model calibrated on measurements; GEMM predictions).
inline constexpr const char* kScheduleModelName = "schedule_simulator";
inline constexpr const char* kScheduleModelVersion = "3";

// ptxas's register count per config (-1 for a variant that failed to compile or is missing).
std::vector<int> compiled_registers(const std::vector<AttentionConfig>& configs,
                                    const std::vector<CompileResult>& results);
std::vector<int> compiled_registers(const std::vector<GemmConfig>& configs,
                                    const GemmCompileOutcome& outcome);

// Compiles `configs` through the cubin cache without per-variant lines (a note on stderr says
// why), for their registers. NVRTC missing: estimates, said once on stderr.
std::vector<int> registers_by_compiling(const Target& target,
                                        const std::vector<AttentionConfig>& configs,
                                        const CompileSettings& settings);
std::vector<int> registers_by_compiling(const GemmTarget& target,
                                        const std::vector<GemmConfig>& configs,
                                        const CompileSettings& settings);

// Stores one prediction row per runnable variant, the whole set in one transaction; returns how
// many.
int store_predictions(const std::filesystem::path& database, const Target& target,
                      const std::vector<model::ModelPrediction>& predictions);
int store_predictions(const std::filesystem::path& database, const GemmTarget& target,
                      const std::vector<model::GemmPrediction>& predictions);

// --model-top K: of `configs`, the K the model predicts fastest on `target` (time model over the
// simulated misses, CTAs per SM from the compiled kernels), in predicted order, then up to
// kModelTopChecks spread evenly over the rest of the ranking as a check on the model, then the
// best of each kernel form the time model has no measurement of (add_form_checks). Says so on
// stdout and adds each chosen variant's "selection" (its predicted rank and time, whether it is a
// check or a form check, the calibration) to `selection`, keyed "<problem key>/<config key>".
inline constexpr int kModelTopChecks = 3;
// Positions in a ranking of `ranked` variants that --model-top K measures: the first K, then
// kModelTopChecks spread evenly over the rest.
std::vector<std::size_t> model_top_positions(std::size_t ranked, int k);
// Then, of each kernel form (model::same_kernel_form) that nothing in `chosen` has and whose time
// the time model borrowed from another form (ModelPrediction::form_calibrated false), the
// best-ranked variant, appended to `chosen` (indexes into `predictions`, `ranked` in predicted
// order): the model cannot rank a form it never measured, so --model-top measures its best
// candidate. Returns how many.
std::size_t add_form_checks(const std::vector<model::ModelPrediction>& predictions,
                            const std::vector<std::size_t>& ranked,
                            std::vector<std::size_t>& chosen);
// Of the backward's first `top` in `chosen` (indexes into `predictions`, `ranked` in predicted
// order), each CTA pair's single-CTA twin (the same variant with cta_pairs off) that `chosen`
// lacks, appended: the model's pair share (model::kCtaPairsRateShare) ranks every pair ahead of its
// twin at head dim 128, from a measurement that a later one contradicts at the causal points, where
// the twins of the lagged m80 picks measured 0.4-1.3% faster (bench/results/attention-backward-
// ws-h200/rotation-2026-11-28/pairs-h200.txt); so the tuner times both. Returns how many.
std::size_t add_single_cta_twins(const std::vector<model::BackwardPrediction>& predictions,
                                 const std::vector<std::size_t>& ranked, std::size_t top,
                                 std::vector<std::size_t>& chosen);
// The same for the attention backward, ranked by its schedule replay's predicted time, then its
// predicted L2 misses, then add_single_cta_twins; each chosen variant's `selection` entry says why
// it was.
std::vector<AttentionBackwardConfig> backward_model_guided_variants(
    const AttentionBackwardProblem& problem, const GpuProfile& gpu,
    const std::vector<AttentionBackwardConfig>& configs, int k,
    std::map<std::string, nlohmann::json>& selection);
std::vector<AttentionConfig> model_guided_variants(
    const Target& target, const std::vector<AttentionConfig>& configs, int k,
    const CompileSettings& settings, std::map<std::string, nlohmann::json>& selection);

// The accuracy the time model has earned (the embedded transfer check) and that the times are
// predictions, for the family ("attention" or "gemm").
std::string prediction_accuracy_text(const std::string& family);

}  // namespace swr
