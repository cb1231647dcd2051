// The TMA tensor maps a wgmma attention variant takes as kernel parameters (Q, K, V), and a cache
// of encoded maps so that a launch re-encodes nothing for the pointers and shape it saw last and
// only retargets the base addresses when the shape is the same.
#pragma once

#include <array>
#include <mutex>
#include <optional>
#include <string>

#include "driver/tensor_map.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"

namespace swr {

// [B, H, S, D] contiguous, seen as rank 3: dims {D, S, B*H}, strides {D*2, S*D*2} bytes, box
// {W, rows, 1} with W = wgmma_attention_chunk_columns(D) and a swizzle of 2W bytes (rows =
// block_m for Q, block_n for K and V; D=128 is loaded as two 64-column boxes, D=80 as five of 16,
// and a box never reaches into the next head's rows).
struct AttentionTensorMapDescriptions {
  TensorMapDescription q, k, v;
};
AttentionTensorMapDescriptions attention_tensor_map_descriptions(const AttentionProblem& problem,
                                                                 const AttentionConfig& config);

struct AttentionPointers {
  CUdeviceptr q = 0, k = 0, v = 0;
  bool operator==(const AttentionPointers&) const = default;
};

// Empty when TMA can describe all three tensors at these addresses, else the first problem in one
// line naming the tensor and the value (tensor_map_problem()).
std::string attention_tensor_map_problem(const AttentionProblem& problem,
                                         const AttentionConfig& config,
                                         const AttentionPointers& pointers);

// Thread-safe. Same shape and pointers: the stored maps; same shape, other pointers: the stored
// maps retargeted; another shape: encoded again.
class AttentionTensorMapCache {
 public:
  struct Maps {
    TensorMap q, k, v;
  };
  // Throws KernelRefused (swr/runtime_options.hpp) naming the value TMA cannot take.
  Maps maps_for(const CudaDriver& driver, const AttentionProblem& problem,
                const AttentionConfig& config, const AttentionPointers& pointers);
  int encodings() const;  // how many times maps were encoded (tests: never per launch)

 private:
  mutable std::mutex mutex_;
  std::optional<std::string> shape_;  // problem key of the stored maps
  AttentionPointers pointers_;
  Maps maps_{};
  int encodings_ = 0;
};

}  // namespace swr
