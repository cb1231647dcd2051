// The work a problem asks of the GPU, whatever its family: its FLOPs and the bytes it must move at
// least (every input read once, the output written once). The derived figures of a record, the
// roofline and the worker's time limits all start from these two numbers.
#pragma once

#include "swr/attention_problem.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {

struct ProblemWork {
  double flops = 0;
  double compulsory_bytes = 0;
};

// Q, K and V read once, O written once.
double compulsory_attention_bytes(const AttentionProblem& problem);

ProblemWork problem_work(const AttentionProblem& problem);
ProblemWork problem_work(const GemmProblem& problem);  // A and B read once, C written once

// max(FLOPs / peak, bytes / bandwidth) on `gpu`: 0 where the profile knows neither rate.
double roofline_seconds(double flops, double bytes, const GpuProfile& gpu);

}  // namespace swr
