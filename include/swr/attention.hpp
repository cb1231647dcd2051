// Running the tuned attention kernel from a user's program: swr::Attention picks the best variant
// for a shape from a TunedCatalog, obtains its cubin (the export's file, else the cubin cache,
// else NVRTC as a last resort), loads it once per CUDA context, and launches it on the caller's
// stream with the caller's device pointers. The CUDA driver is loaded at run time, so programs
// built against this header link no CUDA library.
//
// CUDA handles cross this header as opaque values, so that it needs no <cuda.h>: a CUstream
// converts to StreamHandle (void*) as it is, a CUdeviceptr to DevicePointer (std::uint64_t).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "swr/attention_problem.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

using StreamHandle = void*;           // a CUstream; nullptr is the legacy default stream
using DevicePointer = std::uint64_t;  // a CUdeviceptr

// Row-major [batch, heads, seq, head_dim] tensors of the problem's dtype (2-byte elements), on the
// device of the context that runs them. Q and O have seq_q rows per head, K and V seq_kv.
struct AttentionTensors {
  DevicePointer q = 0;
  DevicePointer k = 0;
  DevicePointer v = 0;
  DevicePointer o = 0;
  // 4 bytes the dynamic-persistence variants use as their tile counter. Optional: when 0, swr
  // keeps one counter per (context, stream) itself. Launches that may run at the same time must
  // not share one workspace.
  DevicePointer workspace = 0;
};

struct AttentionOptions {
  // The GPU name to look up in the catalog; empty: the device that runs the kernel, as
  // `swr-tune gpus` names it ("h200").
  std::string gpu;
  // NVRTC is the last resort for a catalog from a database whose cubin is not in the cache; an
  // export never needs it. Set false (or SWR_RUNTIME_NVRTC=0 in the environment) to refuse instead.
  bool allow_nvrtc = true;
  // The cubin cache; empty: $SWR_CACHE_DIR, else ~/.cache/swr/cubins.
  std::filesystem::path cubin_cache_dir;
};

// Raised before anything is launched when a call cannot run: no tuned kernel for the shape, a
// cubin for an arch the device cannot run, a variant that cannot run the shape, no cubin to be
// had without NVRTC.
class AttentionRefused : public std::runtime_error {
 public:
  explicit AttentionRefused(const std::string& message) : std::runtime_error(message) {}
};

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

class Attention {
 public:
  explicit Attention(TunedCatalog catalog, AttentionOptions options = {});
  ~Attention();
  Attention(const Attention&) = delete;
  Attention& operator=(const Attention&) = delete;

  // Enqueues O = softmax(Q K^T / sqrt(D) [causal]) V on `stream`, in the calling thread's current
  // context (when the thread has none: the primary context of device $SWR_DEVICE, else 0, made
  // current). Returns once enqueued. Thread-safe: any number of threads may call it at once.
  // Throws UsageError for an invalid problem and AttentionRefused as above.
  void run(const AttentionProblem& problem, const AttentionTensors& tensors,
           StreamHandle stream = nullptr) const;

  // Everything run() decides, loading the kernel if needed, without launching.
  AttentionPlan plan(const AttentionProblem& problem) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace swr
