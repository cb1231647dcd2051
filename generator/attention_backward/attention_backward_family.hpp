// The attention backward as a family of the generator: its resource rules (what a CTA of a
// config needs and whether the template takes it), its rendered module (three kernels launched
// in turn), and its variant space. The problem and config are the public
// swr/attention_backward_problem.hpp and swr/attention_backward_config.hpp.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "generator/kernel_family.hpp"
#include "generator/kernel_source.hpp"
#include "generator/resource_model.hpp"
#include "generator/variant_space.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "templates/attention/backward/backward_schedule.cuh"

namespace swr {

// The module's entry points, in launch order (templates/attention/backward/): the preprocess
// (delta, L * log2(e), zeroed dQ accumulator), the main kernel, the postprocess (dQ's dtype).
inline constexpr const char* kBackwardPreprocessEntryName = "swr_attention_backward_pre_v1";
inline constexpr const char* kBackwardEntryName = "swr_attention_backward_v1";
inline constexpr const char* kBackwardPostprocessEntryName = "swr_attention_backward_post_v1";
// Every config's module launches all three, in this order (KernelSource::launch_sequence, the
// runtime's launcher and an export's manifest take it from here).
inline constexpr std::array<const char*, 3> kBackwardLaunchSequence = {
    kBackwardPreprocessEntryName, kBackwardEntryName, kBackwardPostprocessEntryName};

// K, V, stages x (Q, dO tiles, L and delta lists), and the dS^T tile
// (templates/attention/backward/backward_kernel.cuh BackwardTile::kSharedBytes).
int attention_backward_shared_bytes(const AttentionBackwardProblem& problem,
                                    const AttentionBackwardConfig& config);

// Why the template cannot take `config` for `problem` (empty when it can): its static_asserts in
// words.
std::string attention_backward_tile_problem(const AttentionBackwardProblem& problem,
                                            const AttentionBackwardConfig& config);

// Registers per thread before compiling: dK and dV of the warp's K/V rows, S^T and dP^T of a
// step, and bookkeeping.
int estimate_attention_backward_registers(const AttentionBackwardProblem& problem,
                                          const AttentionBackwardConfig& config);

// The tile rules, the instruction path's target rule, then threads, shared memory, registers and
// occupancy on `gpu` (the compiled register count replaces the estimate when given).
ResourceUse attention_backward_resource_use(const AttentionBackwardProblem& problem,
                                            const AttentionBackwardConfig& config,
                                            const GpuProfile& gpu, int compiled_registers = -1);

// The module: the three kernels of the config and the problem's compiled part (head dim, dtype,
// causal); `entry` is the main kernel's, `launch_sequence` all three in order.
KernelSource render_attention_backward_kernel(const AttentionBackwardProblem& problem,
                                              const AttentionBackwardConfig& config);

// Q tiles of the walk (seq_q in block_m rows), and the padded rows of the workspace's lists.
int backward_q_tiles(const AttentionBackwardProblem& problem,
                     const AttentionBackwardConfig& config);

// The schedule's units (backward_tile_unit): the K/V tiles of every (batch, K/V head), two
// neighbouring ones a unit with CTA pairs.
int backward_schedule_units(const AttentionBackwardProblem& problem,
                            const AttentionBackwardConfig& config);

// Whether the kernel of `config` splits the walks of the schedule's last partial wave
// (templates/attention/backward/backward_schedule.cuh: backward_last_wave): the warp-specialized
// kernel of two 64-row K/V warpgroups, adding dQ atomically, without the causal mask, over
// head_major or heads_interleaved units (attention::backward_splits_last_wave says why).
bool backward_splits_last_wave(const AttentionBackwardProblem& problem,
                               const AttentionBackwardConfig& config);
// The split on `wave_size` resident CTAs: units handed out whole and the parts of the others
// (whole = every unit, parts = 1 where nothing is split).
attention::BackwardLastWave backward_last_wave(const AttentionBackwardProblem& problem,
                                               const AttentionBackwardConfig& config,
                                               int wave_size);

// The workspace the three kernels share (templates/attention/backward/backward_args.cuh): L and
// delta lists of the padded rows, the fp32 dQ accumulator, the deterministic mode's semaphores,
// and the split parts' arrivals and sums, each part 256-byte aligned.
// Every part of the workspace starts on this many bytes, and the caller's workspace too (16-byte
// copies; a generous line).
inline constexpr std::size_t kBackwardWorkspaceAlignment = 256;
struct BackwardWorkspaceLayout {
  std::size_t lse_log2 = 0;  // byte offsets
  std::size_t delta = 0;
  std::size_t dq_accum = 0;
  std::size_t semaphores = 0;
  std::size_t split_arrivals = 0;
  std::size_t split_sums = 0;
  std::size_t bytes = 0;  // the whole
};
BackwardWorkspaceLayout backward_workspace_layout(const AttentionBackwardProblem& problem,
                                                  const AttentionBackwardConfig& config);

using AttentionBackwardSpace = SpaceOf<AttentionBackwardConfig>;

// Every knob value the generator knows for the problem on the GPU, before pruning.
std::vector<AttentionBackwardConfig> enumerate_attention_backward_configs(
    const AttentionBackwardProblem& problem, const GpuProfile& gpu);

// The enumerated configs, each kept or pruned with the reason.
AttentionBackwardSpace build_attention_backward_space(const AttentionBackwardProblem& problem,
                                                      const GpuProfile& gpu);

}  // namespace swr

namespace swr {

// The attention backward as a kernel family (generator/kernel_family.hpp).
struct AttentionBackwardFamily {
  using Problem = AttentionBackwardProblem;
  using Config = AttentionBackwardConfig;
  static constexpr const char* kName = kAttentionBackwardFamilyName;
  static constexpr const char* kMeasuredEntry = kBackwardEntryName;
  static SpaceOf<Config> space(const Problem& problem, const GpuProfile& gpu) {
    return build_attention_backward_space(problem, gpu);
  }
  static ResourceUse resources(const Problem& problem, const Config& config, const GpuProfile& gpu,
                               int compiled_registers = -1) {
    return attention_backward_resource_use(problem, config, gpu, compiled_registers);
  }
  static KernelSource render(const Problem& problem, const Config& config) {
    return render_attention_backward_kernel(problem, config);
  }
};

}  // namespace swr
