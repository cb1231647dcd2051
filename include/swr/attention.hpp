// Running the tuned attention kernel from a user's program: swr::Attention picks the best variant
// for a shape from a TunedCatalog, obtains its cubin (the export's file, else the cubin cache,
// else NVRTC as a last resort), loads it once per CUDA context, and launches it on the caller's
// stream with the caller's device pointers. The CUDA driver is loaded at run time, so programs
// built against this header link no CUDA library. CUDA handles cross it as opaque values
// (swr/runtime_options.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "swr/attention_problem.hpp"
#include "swr/export.h"
#include "swr/runtime_options.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

// Element strides of one tensor indexed as [batch, heads, seq, head_dim] (what PyTorch's
// tensor.stride() gives for that view). All four 0, the default: contiguous [B, H, S, D]. Any
// other value needs dim = 1 and rows that do not overlap (a UsageError otherwise); a [B, S, H, D]
// projection viewed as [B, H, S, D] is {S*H*D, D, H*D, 1}.
struct ElementStrides {
  std::int64_t batch = 0;
  std::int64_t head = 0;
  std::int64_t seq = 0;
  std::int64_t dim = 0;
  bool is_default() const { return batch == 0 && head == 0 && seq == 0 && dim == 0; }
};

// [batch, heads, seq, head_dim] tensors of the problem's dtype (2-byte elements), on the device
// of the context that runs them. Q and O have `heads` heads of seq_q rows, K and V kv_heads heads
// of seq_kv rows. Row-major unless their strides say otherwise.
struct AttentionTensors {
  DevicePointer q = 0;
  DevicePointer k = 0;
  DevicePointer v = 0;
  DevicePointer o = 0;
  // 4 bytes the dynamic-persistence variants use as their tile counter. Optional: when 0, swr
  // takes one from a pool of zeroed counters it keeps per (context, stream), cleared together once
  // per 1024 launches, so no clear is enqueued per launch (while the stream is being captured
  // into a CUDA graph: the stream's capture counter, cleared before the kernel; they are allocated
  // at the stream's first launch, so launch once on a stream before capturing it). Launches that
  // may run at the same time must not share one workspace.
  DevicePointer workspace = 0;
  // Default: contiguous. The mma.sync kernels take any row-disjoint layout whose rows start on 16
  // bytes (strides multiples of 8 elements, 16-byte aligned pointers); a layout a kernel cannot
  // read is refused (KernelRefused) before anything is launched.
  ElementStrides q_strides{}, k_strides{}, v_strides{}, o_strides{};
  // Optional: [batch, heads, seq_q] fp32, contiguous, 4-byte aligned. When set, the kernel also
  // writes each query row's log-sum-exp (natural log, of the scaled scores): what
  // swr::AttentionBackward needs. 0, the default, writes nothing extra (inference).
  DevicePointer lse = 0;
};

// The options swr::Gemm takes too.
using AttentionOptions = RuntimeOptions;
// The name attention programs catch; every launcher raises the same KernelRefused.
using AttentionRefused = KernelRefused;

// What run() launches for a shape on the current device.
struct AttentionPlan {
  TunedChoice choice;
  std::string cubin_origin;  // "export", "cubin cache" or "NVRTC"
  std::string arch;          // of the cubin
  std::string device;        // the device's name and compute capability
  int grid = 0;              // CTAs for the asked shape
  int block_threads = 0;
  int dynamic_shared_bytes = 0;
};

// run() of one problem with its decisions made once, by Attention::prepare: the catalog's choice
// and the kernel loaded into the context that was current then. Its run() checks the tensors and
// that the same context is current, and enqueues: no lookup, no allocation, no string, so that a
// binding keeping one per shape pays the driver's launch alone. Valid while the Attention that
// made it lives; copyable; thread-safe.
class SWR_API PreparedAttention {
 public:
  // As Attention::run for the prepared problem; UsageError when the calling thread's current
  // context is not the one it was prepared in. `workspace_zeroed`: the tensors' workspace is 0
  // already (a counter the caller takes once from a pool it clears in stream order), so no clear
  // is enqueued before the kernel, which leaves it nonzero.
  void run(const AttentionTensors& tensors, StreamHandle stream = nullptr,
           bool workspace_zeroed = false) const;
  const TunedChoice& choice() const;
  // The unique id (cuCtxGetId) of the context it was prepared in.
  unsigned long long context_id() const;

 private:
  friend class Attention;
  struct Decided;
  std::shared_ptr<const Decided> decided_;
};

class SWR_API Attention {
 public:
  explicit Attention(TunedCatalog catalog, AttentionOptions options = {});
  ~Attention();
  Attention(const Attention&) = delete;
  Attention& operator=(const Attention&) = delete;

  // Enqueues O = softmax(Q K^T / sqrt(D) [causal]) V on `stream`, in the calling thread's current
  // context (when the thread has none: the primary context of device $SWR_DEVICE, else 0, made
  // current). Returns once enqueued. Thread-safe: any number of threads may call it at once.
  // Throws UsageError for an invalid problem and AttentionRefused (swr/runtime_options.hpp) for a
  // call that cannot run.
  void run(const AttentionProblem& problem, const AttentionTensors& tensors,
           StreamHandle stream = nullptr) const;

  // Everything run() decides, loading the kernel if needed, without launching.
  AttentionPlan plan(const AttentionProblem& problem) const;

  // Everything run() decides, once, in the calling thread's current context: a launch that then
  // takes only the tensors and the stream. Throws as run() does.
  PreparedAttention prepare(const AttentionProblem& problem) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace swr
