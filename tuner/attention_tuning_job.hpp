// The attention family's tuning job, from checked inputs to exit code: tune on the present device
// when it is the named GPU, or compile only, rank by the L2 model (stored as predictions, never as
// measurements) and say why, when it is not. The GEMM family's is gemm_tuning_job.hpp.
#pragma once

#include <string>
#include <vector>

#include "swr/attention_problem.hpp"
#include "tuner/tuning_request.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

struct AttentionTuningJob {
  Target target;                           // the GPU as named (the datasheet profile)
  std::vector<AttentionProblem> problems;  // attention_problems_to_tune()
  std::vector<std::string> config_keys;    // only these variants, when given
  CompileSettings compile;
  TuningRequest tuning;
  bool plant_fault = false;  // for tests: add a variant that faults on purpose
};

// The problems to tune: the one asked for, or its causal and non-causal forms with `both`.
std::vector<AttentionProblem> attention_problems_to_tune(const AttentionProblem& problem,
                                                         bool both);

// 0 when done (failed variants are results too), 1 when compiling only and a variant failed to
// compile, 130 after Ctrl-C.
int run_attention_tuning_job(const AttentionTuningJob& job);

}  // namespace swr
