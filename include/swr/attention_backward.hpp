// Training with the tuned attention: swr::AttentionBackward picks the best backward variant for a
// shape from a TunedCatalog (any, or one whose dQ is deterministic), obtains its module (the
// cubin cache, else NVRTC), loads it once per CUDA context, and enqueues its three kernels
// (preprocess, main, postprocess) on the caller's stream with a workspace the caller owns. The
// forward must have written each row's log-sum-exp (AttentionTensors::lse).
#pragma once

#include <cstddef>
#include <memory>

#include "swr/attention.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/export.h"
#include "swr/runtime_options.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

// The backward's tensors, of the problem's dtype unless said otherwise: Q, O, dO, dQ
// [B, H, S_q, D]; K, V, dK, dV [B, H_kv, S_kv, D] (dK, dV of a grouped K/V head sum its query
// heads' shares); lse the forward's [B, H, S_q] fp32, contiguous. Strides as AttentionTensors
// takes them (all 0: contiguous).
struct AttentionBackwardTensors {
  DevicePointer q = 0, k = 0, v = 0, o = 0, d_o = 0, lse = 0;
  DevicePointer dq = 0, dk = 0, dv = 0;
  // At least workspace_bytes() of the prepared problem, 256-byte aligned; the launch fills it
  // (row lists, the fp32 dQ accumulator). Launches that may overlap must not share one.
  DevicePointer workspace = 0;
  std::size_t workspace_bytes = 0;
  ElementStrides q_strides{}, k_strides{}, v_strides{}, o_strides{}, d_o_strides{}, dq_strides{},
      dk_strides{}, dv_strides{};
};

// One backward problem decided once (AttentionBackward::prepare): valid while the
// AttentionBackward that made it lives; copyable; thread-safe.
class SWR_API PreparedAttentionBackward {
 public:
  // Checks the tensors (UsageError for strides that are no layout, KernelRefused for buffers the
  // kernels cannot take, e.g. a workspace too small), then enqueues the three kernels.
  void run(const AttentionBackwardTensors& tensors, StreamHandle stream = nullptr) const;
  const TunedBackwardChoice& choice() const;
  // The workspace the chosen variant needs for the prepared problem, in bytes.
  std::size_t workspace_bytes() const;
  unsigned long long context_id() const;

 private:
  friend class AttentionBackward;
  struct Decided;
  std::shared_ptr<const Decided> decided_;
};

class SWR_API AttentionBackward {
 public:
  explicit AttentionBackward(TunedCatalog catalog, AttentionOptions options = {});
  ~AttentionBackward();
  AttentionBackward(const AttentionBackward&) = delete;
  AttentionBackward& operator=(const AttentionBackward&) = delete;

  // Decides (catalog lookup for the calling thread's device, or options.gpu) and loads, in the
  // calling thread's current context, without launching. UsageError for an invalid problem,
  // KernelRefused when nothing tuned serves it (with `dq` deterministic: no deterministic variant).
  PreparedAttentionBackward prepare(const AttentionBackwardProblem& problem,
                                    DqRequirement dq = DqRequirement::any) const;
  // prepare() then run().
  void run(const AttentionBackwardProblem& problem, const AttentionBackwardTensors& tensors,
           StreamHandle stream = nullptr, DqRequirement dq = DqRequirement::any) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace swr
