// Runs one compiled attention variant: loads its cubin into the current context, sizes the grid
// for its persistence mode, and launches it on a stream. wgmma variants take Q, K and V as TMA
// tensor maps, kept per module and retargeted, never encoded per launch.
#pragma once

#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_resources.hpp"
#include "runtime/attention_layout.hpp"
#include "runtime/attention_tensor_maps.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"

namespace swr {

struct AttentionBuffers {
  CUdeviceptr q = 0, k = 0, v = 0, o = 0;  // [B, H, S, D] (K, V: H_kv heads), 16-bit elements
  CUdeviceptr tile_counter = 0;            // one int; needed by dynamic persistence only
  // The caller's tile counter is 0 already (taken from a pool it clears), so launch() enqueues no
  // clear of it before the kernel. The kernel leaves it nonzero.
  bool tile_counter_zeroed = false;
  // As swr::AttentionTensors takes them: all 0 is contiguous [B, H, S, D].
  ElementStrides q_strides{}, k_strides{}, v_strides{}, o_strides{};
  // [B, H, S_q] fp32, contiguous: each row's log-sum-exp for the backward; 0 writes none.
  CUdeviceptr lse = 0;
};

// Why `config` cannot run on these buffers laid out so (empty when it can): the mma.sync kernels
// copy 16-byte chunks (pointers 16-byte aligned, strides of dimensions longer than 1 multiples of
// 8 elements); the wgmma kernel writes O in 4-byte pairs (O 4-byte aligned, its strides even),
// and what TMA cannot describe of Q, K and V is refused by the tensor maps.
std::string attention_layout_refusal(const AttentionProblem& problem, const AttentionConfig& config,
                                     const AttentionLayout& layout,
                                     const AttentionBuffers& buffers);

class AttentionKernelModule {
 public:
  // Loads the cubin into the current context (a DriverError if the device cannot run it).
  AttentionKernelModule(const CudaDriver& driver, const std::vector<char>& cubin,
                        const AttentionConfig& config, int dynamic_shared_bytes, int sm_count);
  AttentionKernelModule(const AttentionKernelModule&) = delete;
  AttentionKernelModule& operator=(const AttentionKernelModule&) = delete;

  int blocks_per_sm() const { return kernel_.blocks_per_sm(); }
  // CTAs resident at once: the persistent grid, and the wave that grid-mode sawtooth flips on.
  int wave_size() const { return kernel_.blocks_per_sm() * sm_count_; }
  // One CTA per Q tile for `grid`, at most one wave for the persistent modes.
  int grid_size(const AttentionProblem& problem) const;
  int registers_per_thread() const { return kernel_.registers_per_thread(); }
  // Whether the cubin's entry takes the log-sum-exp (kAttentionEntryName); an older export's
  // (kAttentionEntryWithoutLse) runs without it.
  bool writes_lse() const { return kernel_.entry_index() == 0; }
  int tensor_map_encodings() const { return tensor_maps_.encodings(); }

  // Softmax scale 1/sqrt(D). `persistent_ctas` > 0 caps the persistent grid (tests use it to make
  // each CTA take several tiles). Before launching: UsageError for strides that are not a layout
  // (resolve_attention_layout), KernelRefused for a layout the variant cannot read
  // (attention_layout_refusal), when a wgmma variant's tensors cannot be described by TMA, and for
  // a log-sum-exp asked of a cubin that cannot write it (writes_lse).
  void launch(const AttentionProblem& problem, const AttentionBuffers& buffers, CUstream stream,
              int persistent_ctas = 0) const;

 private:
  const CudaDriver& driver_;
  AttentionConfig config_;
  int dynamic_shared_bytes_ = 0;
  int sm_count_ = 0;
  LoadedCubin kernel_;
  mutable AttentionTensorMapCache tensor_maps_;
};

// Q tiles of a problem for a tile height: what the grid and the persistent loop walk.
long long attention_tile_count(const AttentionProblem& problem, const AttentionConfig& config);

}  // namespace swr
