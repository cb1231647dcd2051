// The kernels of an attention backward module as AttentionBackwardModule launches them, in launch
// order (kBackwardLaunchSequence): each one's entry, block size, dynamic shared memory and CTAs.
// The launcher takes its numbers from here and an export's manifest writes them out
// (runtime/manifest_backward_entry.cpp), so that a program that launches an exported module
// without swr is told what swr does.
#pragma once

#include <array>
#include <string_view>

#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"

namespace swr {

enum class BackwardPass { preprocess, main, postprocess };
std::string_view to_string(BackwardPass pass);

struct BackwardKernel {
  BackwardPass pass;
  const char* entry;  // extern "C"
  int block_threads;
  int dynamic_shared_bytes;
};

// Every config's module launches all three. `main_shared_bytes`: the main kernel's dynamic shared
// memory (attention_backward_shared_bytes of the compiled part, as the tuner records it); the
// passes take none (LoadedCubin::other_function opts none in).
std::array<BackwardKernel, 3> backward_module_kernels(const AttentionBackwardConfig& config,
                                                      int main_shared_bytes);
// The one of `kernels` that was tuned and measured (KernelSource::entry).
const BackwardKernel& main_kernel(const std::array<BackwardKernel, 3>& kernels);

// Query rows a CTA of the preprocess or of a row-wise postprocess takes: kPassThreads /
// pass_row_threads(head_dim) (templates/attention/backward/backward_args.cuh).
int backward_pass_rows_per_cta(int head_dim);
// The parts of a Q tile the postprocess takes a CTA each where the main kernel keeps dQ's
// accumulator in its fragments' order (kDqFragmentParts); 0 where it keeps it by rows.
int backward_dq_parts(const AttentionBackwardConfig& config);

// CTAs of `pass` on `problem`. The main kernel's depend on `wave_size`, its CTAs resident at once
// (blocks_per_sm * sm_count): persistent modes take at most a wave, and the warp-specialized
// kernel may split the last partial wave's units (backward_last_wave).
long long backward_ctas(BackwardPass pass, const AttentionBackwardProblem& problem,
                        const AttentionBackwardConfig& config, int wave_size);

}  // namespace swr
