#include "runtime/attention_backward/backward_kernels.hpp"

#include <algorithm>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "templates/attention/backward/backward_args.cuh"
#include "templates/attention/backward/dq_accumulator_layout.cuh"

namespace swr {

std::string_view to_string(BackwardPass pass) {
  switch (pass) {
    case BackwardPass::preprocess:
      return "preprocess";
    case BackwardPass::main:
      return "main";
    case BackwardPass::postprocess:
      return "postprocess";
  }
  return "unknown";
}

namespace {

// What each entry of the module computes.
BackwardPass pass_of(const char* entry) {
  const std::string_view name = entry;
  if (name == kBackwardPreprocessEntryName) return BackwardPass::preprocess;
  if (name == kBackwardPostprocessEntryName) return BackwardPass::postprocess;
  return BackwardPass::main;
}

}  // namespace

std::array<BackwardKernel, 3> backward_module_kernels(const AttentionBackwardConfig& config,
                                                      int main_shared_bytes) {
  std::array<BackwardKernel, 3> kernels{};
  for (std::size_t index = 0; index < kernels.size(); ++index) {
    const char* entry = kBackwardLaunchSequence[index];
    const BackwardPass pass = pass_of(entry);
    const bool main = pass == BackwardPass::main;
    kernels[index] = {pass, entry, main ? config.threads() : attention::kPassThreads,
                      main ? main_shared_bytes : 0};
  }
  return kernels;
}

const BackwardKernel& main_kernel(const std::array<BackwardKernel, 3>& kernels) {
  return *std::find_if(kernels.begin(), kernels.end(), [](const BackwardKernel& kernel) {
    return kernel.pass == BackwardPass::main;
  });
}

int backward_pass_rows_per_cta(int head_dim) {
  return attention::kPassThreads / attention::pass_row_threads(head_dim);
}

int backward_dq_parts(const AttentionBackwardConfig& config) {
  return config.dq_in_fragments() ? attention::kDqFragmentParts : 0;
}

long long backward_ctas(BackwardPass pass, const AttentionBackwardProblem& problem,
                        const AttentionBackwardConfig& config, int wave_size) {
  const AttentionProblem& shape = problem.shape;
  const long long heads = static_cast<long long>(shape.batch) * shape.heads;
  const int q_tiles = backward_q_tiles(problem, config);
  switch (pass) {
    case BackwardPass::preprocess: {
      // Every padded row of the workspace's lists (seq_q_padded = q_tiles * block_m).
      const long long rows = heads * q_tiles * config.block_m;
      const long long per_cta = backward_pass_rows_per_cta(shape.head_dim);
      return (rows + per_cta - 1) / per_cta;
    }
    case BackwardPass::main: {
      // With CTA pairs, whole pairs of K/V tiles a head; the last wave's units split into parts.
      const long long ctas = static_cast<long long>(attention::backward_scheduled_units(
                                 backward_last_wave(problem, config, wave_size),
                                 backward_schedule_units(problem, config))) *
                             config.cluster_ctas();
      return config.persistence == Persistence::grid ? ctas : std::min<long long>(ctas, wave_size);
    }
    case BackwardPass::postprocess:
      return attention::backward_postprocess_blocks(backward_dq_parts(config), heads, shape.seq_q,
                                                    q_tiles, shape.head_dim);
  }
  return 0;
}

}  // namespace swr
