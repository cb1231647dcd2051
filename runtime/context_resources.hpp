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

// The tile counters of dynamic-persistence launches whose caller gave no workspace, per (context,
// stream), so that launches on different streams, which may run at the same time, never share one.
// The per-thread default stream is a different stream in each thread, and is told apart by thread.
// Each stream has a pool of counters zeroed together: a launch takes the next one, zeroed already,
// so no clear is enqueued per launch; when all are taken, one clear of the whole pool is enqueued
// on the stream, after every kernel that used them. While the stream is being captured into a CUDA
// graph the pool is left alone (a replay would reuse a counter the pool hands out again): the
// launch gets the stream's capture counter, which it clears itself, inside the graph. Freed in
// their context with the registry.
class StreamWorkspaces {
 public:
  // Counters per stream cleared at once: one clear of 4 KiB per this many launches.
  static constexpr int kPooledCounters = 1024;

  struct TileCounter {
    CUdeviceptr pointer = 0;
    bool zeroed = false;  // 0 already in stream order: the launch enqueues no clear
  };

  StreamWorkspaces() = default;
  ~StreamWorkspaces();
  StreamWorkspaces(const StreamWorkspaces&) = delete;
  StreamWorkspaces& operator=(const StreamWorkspaces&) = delete;

  // A counter for one launch on `stream` in `context` (current on this thread); the pool is
  // allocated on first use.
  TileCounter tile_counter(const CurrentContext& context, CUstream stream);

 private:
  struct Workspace {
    CUcontext context = nullptr;
    CUdeviceptr counters = 0;     // kPooledCounters pooled, then the capture counter
    int taken = kPooledCounters;  // all taken: the first launch clears the pool
  };

  std::mutex mutex_;
  std::map<std::tuple<unsigned long long, CUstream, std::thread::id>, Workspace> workspaces_;
};

}  // namespace swr
