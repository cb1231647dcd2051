#include "runtime/context_resources.hpp"

#include <mutex>

#include "driver/cuda_driver.hpp"
#include "runtime/attention_backward/backward_launcher.hpp"
#include "runtime/attention_launcher.hpp"
#include "runtime/gemm_launcher.hpp"

namespace swr {

template <class Module>
LoadedKernels<Module>::~LoadedKernels() {
  by_kernel_.clear();
  for (auto& [key, loaded] : by_cubin_) {
    try {
      // cuModuleUnload works on the current context: make the module's own current first.
      const ScopedContext scope(loaded->context);
      loaded->module.reset();
    } catch (...) {
      // The context is gone (destroyed by its owner): so is the module.
    }
  }
}

template <class Module>
const LoadedKernel<Module>& LoadedKernels<Module>::find_or_load(
    const CurrentContext& context, const std::shared_ptr<const TunedKernelBase>& kernel,
    const Loader& load) {
  const std::pair<unsigned long long, const TunedKernelBase*> key{context.id, kernel.get()};
  {
    std::shared_lock lock(mutex_);
    if (auto found = by_kernel_.find(key); found != by_kernel_.end()) {
      return *found->second.loaded;
    }
  }
  // Loading is rare (once per variant and context): one loader at a time keeps it simple.
  std::unique_lock lock(mutex_);
  if (auto found = by_kernel_.find(key); found != by_kernel_.end()) return *found->second.loaded;
  const std::string cubin_id = kernel->source_hash + ":" + kernel->arch;
  std::shared_ptr<LoadedKernel<Module>>& shared = by_cubin_[{context.id, cubin_id}];
  if (!shared) {
    try {
      shared = std::make_shared<LoadedKernel<Module>>(load());
    } catch (...) {
      by_cubin_.erase({context.id, cubin_id});
      throw;
    }
  }
  return *by_kernel_.emplace(key, ByKernel{kernel, shared}).first->second.loaded;
}

template class LoadedKernels<AttentionKernelModule>;
template class LoadedKernels<GemmKernelModule>;
template class LoadedKernels<AttentionBackwardModule>;

StreamWorkspaces::~StreamWorkspaces() {
  const CudaDriver* driver = CudaDriver::try_get();
  if (driver == nullptr) return;
  for (auto& [key, workspace] : workspaces_) {
    try {
      const ScopedContext scope(workspace.context);
      driver->cuMemFree(workspace.counters);
    } catch (...) {
      // The context is gone, and its memory with it.
    }
  }
}

StreamWorkspaces::TileCounter StreamWorkspaces::tile_counter(const CurrentContext& context,
                                                             CUstream stream) {
  const CudaDriver& driver = CudaDriver::get();
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  SWR_CU(driver, cuStreamIsCapturing(stream, &capture));
  const std::thread::id thread =
      stream == CU_STREAM_PER_THREAD ? std::this_thread::get_id() : std::thread::id();
  std::lock_guard lock(mutex_);
  Workspace& workspace = workspaces_[{context.id, stream, thread}];
  if (workspace.counters == 0) {
    SWR_CU(driver, cuMemAlloc(&workspace.counters, (kPooledCounters + 1) * sizeof(int)));
    workspace.context = context.context;
  }
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    return {workspace.counters + kPooledCounters * sizeof(int), false};
  }
  if (workspace.taken == kPooledCounters) {
    SWR_CU(driver, cuMemsetD32Async(workspace.counters, 0, kPooledCounters, stream));
    workspace.taken = 0;
  }
  return {workspace.counters + workspace.taken++ * sizeof(int), true};
}

}  // namespace swr
