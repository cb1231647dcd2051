// The tuned kernels an Attention has loaded, per CUDA context: a cubin is loaded into a context
// once, on first use, and every later call finds it under a shared lock. Modules are unloaded in
// their own context when the registry goes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>

#include "runtime/current_context.hpp"
#include "swr/tuned_catalog.hpp"
#include "tuner/attention_launcher.hpp"

namespace swr {

struct LoadedKernel {
  std::unique_ptr<AttentionKernelModule> module;
  CUcontext context = nullptr;
  std::string cubin_origin;  // "export", "cubin cache" or "NVRTC"
};

class LoadedKernels {
 public:
  // Loads a kernel into the calling thread's current context (the one passed to find_or_load).
  using Loader = std::function<LoadedKernel()>;

  LoadedKernels() = default;
  ~LoadedKernels();
  LoadedKernels(const LoadedKernels&) = delete;
  LoadedKernels& operator=(const LoadedKernels&) = delete;

  // The kernel in `context`, loaded by `load` on first use. Kernels of the same build and arch
  // (one variant serving several shapes) share one module per context. Thread-safe; a failed
  // load is not remembered, so the next call tries again.
  const LoadedKernel& find_or_load(const CurrentContext& context,
                                   const std::shared_ptr<const TunedKernel>& kernel,
                                   const Loader& load);

 private:
  struct ByKernel {
    std::shared_ptr<const TunedKernel> kernel;  // keeps the key's pointer valid
    std::shared_ptr<LoadedKernel> loaded;
  };

  std::shared_mutex mutex_;
  std::map<std::pair<unsigned long long, const TunedKernel*>, ByKernel> by_kernel_;
  std::map<std::pair<unsigned long long, std::string>, std::shared_ptr<LoadedKernel>> by_cubin_;
};

}  // namespace swr
