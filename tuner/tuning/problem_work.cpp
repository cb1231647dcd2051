#include "tuner/tuning/problem_work.hpp"

#include "model/model_prediction.hpp"

namespace swr {

double compulsory_attention_bytes(const AttentionProblem& problem) {
  const double element = static_cast<double>(element_bytes(problem.dtype));
  const double heads = static_cast<double>(problem.batch) * problem.heads * problem.head_dim;
  return heads * (2.0 * problem.seq_q + 2.0 * problem.seq_kv) * element;
}

ProblemWork problem_work(const AttentionProblem& problem) {
  return {problem.flops(), compulsory_attention_bytes(problem)};
}

ProblemWork problem_work(const GemmProblem& problem) {
  return {problem.flops(), problem.compulsory_bytes()};
}

double roofline_seconds(double flops, double bytes, const GpuProfile& gpu) {
  return model::roofline_estimate(flops, bytes, gpu).seconds;
}

}  // namespace swr
