// The tuned kernels a launcher (swr::Attention, swr::Gemm) has loaded, per CUDA context: a cubin is
// loaded into a context once, on first use, and every later call finds it under a shared lock.
// Modules are unloaded in their own context when the registry goes. `Module` is the family's
// launcher (AttentionKernelModule, GemmKernelModule).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>

#include "driver/device_context.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

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

}  // namespace swr
