#include "runtime/stream_workspaces.hpp"

#include "driver/cuda_driver.hpp"

namespace swr {

StreamWorkspaces::~StreamWorkspaces() {
  const CudaDriver* driver = CudaDriver::try_get();
  if (driver == nullptr) return;
  for (auto& [key, workspace] : workspaces_) {
    try {
      const ScopedContext scope(workspace.context);
      driver->cuMemFree(workspace.counter);
    } catch (...) {
      // The context is gone, and its memory with it.
    }
  }
}

CUdeviceptr StreamWorkspaces::tile_counter(const CurrentContext& context, CUstream stream) {
  const std::thread::id thread =
      stream == CU_STREAM_PER_THREAD ? std::this_thread::get_id() : std::thread::id();
  std::lock_guard lock(mutex_);
  Workspace& workspace = workspaces_[{context.id, stream, thread}];
  if (workspace.counter == 0) {
    const CudaDriver& driver = CudaDriver::get();
    SWR_CU(driver, cuMemAlloc(&workspace.counter, sizeof(int)));
    workspace.context = context.context;
  }
  return workspace.counter;
}

}  // namespace swr
