// The attention family's part of a tuning job (tuning_job.hpp): the shapes a session tunes on the
// present device, or, when the named GPU is not here, compiling only, ranking by the L2 model
// (stored as predictions, never as measurements) and saying why. The GEMM family's part is
// gemm_tuning_job.hpp.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/plan_file.hpp"
#include "tuner/tuning/tuning_session.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

// The problems to tune: the one asked for, or its causal and non-causal forms with `both`.
std::vector<AttentionProblem> attention_problems_to_tune(const AttentionProblem& problem,
                                                         bool both);

// Which of a problem's variants to measure, in order (--model-top: the model's best and checks).
using AttentionVariantChoice = std::function<std::vector<AttentionConfig>(
    const AttentionProblem&, const std::vector<AttentionConfig>&)>;

// Each problem with its variants on `gpu` (its config keys only, when given: UsageError for one
// that does not fit), narrowed by `choose` when given, the planted fault first when asked (for
// tests: a variant that faults on purpose, first so that --limit keeps it).
std::vector<TuningShape> attention_tuning_shapes(const std::vector<PlannedAttention>& planned,
                                                 const GpuProfile& gpu, bool plant_fault,
                                                 const AttentionVariantChoice& choose = {});

// Without the named GPU: compile what a tune would measure, rank it by the L2 model (stored in
// `database` as predictions, never as measurements), and say why nothing is timed (and that
// --model-top, when given, had nothing to choose for). 1 when a variant failed to compile, else 0.
int compile_and_predict(const GpuProfile& gpu, const std::vector<PlannedAttention>& planned,
                        const CompileSettings& settings, const std::filesystem::path& database,
                        const std::optional<GpuProfile>& present,
                        std::optional<int> model_top = std::nullopt);

}  // namespace swr
