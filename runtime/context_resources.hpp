// What a launcher (swr::Attention, swr::Gemm) keeps per CUDA context and releases in that context
// when it goes: the tuned kernels it has loaded, and the tile counters of its launches.
#pragma once

#include <cuda.h>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "driver/device_context.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

// The tuned kernels a launcher (swr::Attention, swr::Gemm) has loaded, per CUDA context: a cubin is
// loaded into a context once, on first use, and every later call finds it under a shared lock.
// Modules are unloaded in their own context when the registry goes. `Module` is the family's
// launcher (AttentionKernelModule, GemmKernelModule).
template <class Module>
struct LoadedKernel {
  std::unique_ptr<Module> module;
  CUcontext context = nullptr;
  std::string cubin_origin;  // "export", "cubin cache" or "NVRTC"
};

template <class Module>
class LoadedKernels {
 public:
  // Loads a kernel into the calling thread's current context (the one passed to find_or_load).
  using Loader = std::function<LoadedKernel<Module>()>;

  LoadedKernels() = default;
  ~LoadedKernels();
  LoadedKernels(const LoadedKernels&) = delete;
  LoadedKernels& operator=(const LoadedKernels&) = delete;

  // The kernel in `context`, loaded by `load` on first use. Kernels of the same build and arch
  // (one variant serving several shapes; GEMM variants that differ only in their swizzle, a
  // launch argument) share one module per context. Thread-safe; a failed load is not remembered,
  // so the next call tries again.
  const LoadedKernel<Module>& find_or_load(const CurrentContext& context,
                                           const std::shared_ptr<const TunedKernelBase>& kernel,
                                           const Loader& load);

 private:
  struct ByKernel {
    std::shared_ptr<const TunedKernelBase> kernel;  // keeps the key's pointer valid
    std::shared_ptr<LoadedKernel<Module>> loaded;
  };

  std::shared_mutex mutex_;
  std::map<std::pair<unsigned long long, const TunedKernelBase*>, ByKernel> by_kernel_;
  std::map<std::pair<unsigned long long, std::string>, std::shared_ptr<LoadedKernel<Module>>>
      by_cubin_;
};

class AttentionKernelModule;
class GemmKernelModule;
extern template class LoadedKernels<AttentionKernelModule>;
extern template class LoadedKernels<GemmKernelModule>;

// The tile counters of dynamic-persistence launches whose caller gave no workspace: one int per
// (context, stream), so that launches on different streams, which may run at the same time, never
// share one. The per-thread default stream is a different stream in each thread, and is told
// apart by thread. Freed in their context with the registry.
class StreamWorkspaces {
 public:
  StreamWorkspaces() = default;
  ~StreamWorkspaces();
  StreamWorkspaces(const StreamWorkspaces&) = delete;
  StreamWorkspaces& operator=(const StreamWorkspaces&) = delete;

  // The counter of `stream` in `context` (current on this thread), allocated on first use.
  CUdeviceptr tile_counter(const CurrentContext& context, CUstream stream);

 private:
  struct Workspace {
    CUcontext context = nullptr;
    CUdeviceptr counter = 0;
  };

  std::mutex mutex_;
  std::map<std::tuple<unsigned long long, CUstream, std::thread::id>, Workspace> workspaces_;
};

}  // namespace swr
