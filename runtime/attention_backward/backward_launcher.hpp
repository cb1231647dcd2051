// Runs one compiled attention backward variant: loads its module (the preprocess, main and
// postprocess kernels), checks what the caller hands it, and launches the three in turn on a
// stream with a workspace the caller owns (backward_workspace_layout says its size).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_resources.hpp"
#include "driver/tensor_map.hpp"
#include "driver/tensor_map_set.hpp"
#include "runtime/attention_backward/backward_kernels.hpp"
#include "swr/attention.hpp"
#include "swr/attention_backward.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "templates/attention/backward/backward_args.cuh"

namespace swr {

// What the caller hands swr::AttentionBackward (swr/attention_backward.hpp), and the dynamic
// persistence's tile counter, which the runtime takes from its pool.
struct AttentionBackwardBuffers : AttentionBackwardTensors {
  CUdeviceptr tile_counter = 0;  // one int; dynamic persistence only
  bool tile_counter_zeroed = false;
};

// The eight tensors' strides as the kernels index them.
struct BackwardLayout {
  attention::TensorStrides q, k, v, o, d_o, dq, dk, dv;
};

// The warp-specialized wgmma kernel's tensor maps (AttentionBackwardConfig::warp_specialized) of
// Q, K, V and dO, in its argument order: the forward's rule (attention_tensor_map_description)
// with boxes of block_m rows for Q and dO, block_n rows for K and V.
TensorMapSet<4>::Descriptions backward_tensor_map_descriptions(
    const AttentionBackwardProblem& problem, const AttentionBackwardConfig& config,
    const BackwardLayout& layout);

// UsageError for strides that are not a layout (as the forward's); then why the kernels cannot
// run on these buffers (empty when they can): 16-byte copies of every tensor, a 4-byte aligned
// log-sum-exp, a workspace of the layout's size (the warp-specialized kernel's tensor maps are
// checked where they are encoded, before anything runs).
BackwardLayout resolve_backward_layout(const AttentionProblem& shape,
                                       const AttentionBackwardBuffers& buffers);
std::string backward_buffers_refusal(const AttentionBackwardProblem& problem,
                                     const AttentionBackwardConfig& config,
                                     const BackwardLayout& layout,
                                     const AttentionBackwardBuffers& buffers);

class AttentionBackwardModule {
 public:
  // Loads the cubin into the current context (a DriverError if the device cannot run it or it
  // lacks one of the three entries).
  AttentionBackwardModule(const CudaDriver& driver, const std::vector<char>& cubin,
                          const AttentionBackwardConfig& config, int dynamic_shared_bytes,
                          int sm_count);
  AttentionBackwardModule(const AttentionBackwardModule&) = delete;
  AttentionBackwardModule& operator=(const AttentionBackwardModule&) = delete;

  int blocks_per_sm() const { return kernel_.blocks_per_sm(); }
  int wave_size() const { return kernel_.blocks_per_sm() * sm_count_; }
  int registers_per_thread() const { return kernel_.registers_per_thread(); }
  // CTAs of the main kernel: one per (K/V tile, batch, K/V head) for `grid`, at most a wave for
  // the persistent modes.
  int grid_size(const AttentionBackwardProblem& problem) const;

  // Enqueues the preprocess, the main kernel and the postprocess (and the tile counter's clear).
  // Before anything: UsageError for bad strides, KernelRefused for buffers the kernels cannot
  // take (backward_buffers_refusal) or tensor maps TMA cannot describe.
  void launch(const AttentionBackwardProblem& problem, const AttentionBackwardBuffers& buffers,
              CUstream stream, int persistent_ctas = 0) const;
  // The main kernel alone, on a workspace a launch() already filled (its dQ accumulator keeps
  // adding up): what the L2 counters measure, since the passes around it only stream rows and
  // CUPTI on the H200 names the ranges of a launch by number, not by kernel.
  void launch_main(const AttentionBackwardProblem& problem, const AttentionBackwardBuffers& buffers,
                   CUstream stream) const;

 private:
  void launch_kernels(const AttentionBackwardProblem& problem,
                      const AttentionBackwardBuffers& buffers, CUstream stream, int persistent_ctas,
                      bool with_passes) const;

  const CudaDriver& driver_;
  AttentionBackwardConfig config_;
  int sm_count_ = 0;
  std::array<BackwardKernel, 3> kernels_;  // in launch order
  LoadedCubin kernel_;                     // the main kernel's, in its module
  std::array<CUfunction, 3> functions_{};  // of kernels_
  mutable TensorMapSet<4> tensor_maps_;    // the warp-specialized kernel's
};

// The launch-argument block of the three kernels.
attention::BackwardArgs backward_launch_args(const AttentionBackwardProblem& problem,
                                             const AttentionBackwardConfig& config,
                                             const BackwardLayout& layout,
                                             const AttentionBackwardBuffers& buffers,
                                             int wave_size);

}  // namespace swr
