// The TMA tensor maps a wgmma attention variant takes as kernel parameters (Q, K, V), and a cache
// of encoded maps so that a launch re-encodes nothing for the pointers, shape and strides it saw
// last and only retargets the base addresses when the shape and strides are the same.
#pragma once

#include <string>

#include "driver/tensor_map.hpp"
#include "driver/tensor_map_set.hpp"
#include "runtime/attention_layout.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"

namespace swr {

// Each tensor as its [B, H, S, D] view at its own element strides, rank 4 innermost first: dims
// {D, S, H, B} (H: heads for Q, kv_heads for K and V), byte strides {seq, head, batch} * 2, box
// {W, rows, 1, 1} with W = wgmma_attention_chunk_columns(D) and a swizzle of 2W bytes (rows =
// block_m for Q, block_n for K and V; D=128 is loaded as two 64-column boxes, D=80 as five of 16).
// A box never reaches into another head's rows, whatever the strides (BHSD, or BSHD whose head
// stride is one row). A dimension of extent 1 is never stepped: its stride is described as the
// span of the dimensions inside it, which TMA's rules always accept.
// One such tensor: `heads` heads of `seq` rows at `strides`, boxes of `box_rows` rows (the
// backward's Q, K, V and dO use it too).
TensorMapDescription attention_tensor_map_description(std::string name,
                                                      const AttentionProblem& problem,
                                                      const attention::TensorStrides& strides,
                                                      int heads, int seq, int box_rows);

struct AttentionTensorMapDescriptions {
  TensorMapDescription q, k, v;
};
AttentionTensorMapDescriptions attention_tensor_map_descriptions(const AttentionProblem& problem,
                                                                 const AttentionConfig& config,
                                                                 const AttentionLayout& layout);

struct AttentionPointers {
  CUdeviceptr q = 0, k = 0, v = 0;
  bool operator==(const AttentionPointers&) const = default;
};

// Empty when TMA can describe all three tensors at these addresses and strides, else the first
// problem in one line naming the tensor and the value (tensor_map_problem()).
std::string attention_tensor_map_problem(const AttentionProblem& problem,
                                         const AttentionConfig& config,
                                         const AttentionLayout& layout,
                                         const AttentionPointers& pointers);

// Thread-safe. Same shape, strides and pointers: the stored maps; same shape and strides, other
// pointers: the stored maps retargeted; another shape or other strides: encoded again
// (driver/tensor_map_set.hpp).
class AttentionTensorMapCache {
 public:
  struct Maps {
    TensorMap q, k, v;
  };
  // Throws KernelRefused (swr/runtime_options.hpp) naming the value TMA cannot take.
  Maps maps_for(const CudaDriver& driver, const AttentionProblem& problem,
                const AttentionConfig& config, const AttentionLayout& layout,
                const AttentionPointers& pointers);
  int encodings() const { return maps_.encodings(); }  // tests: never per launch

 private:
  TensorMapSet<3> maps_;
};

}  // namespace swr
