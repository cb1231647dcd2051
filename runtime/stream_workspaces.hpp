// The tile counters of dynamic-persistence launches whose caller gave no workspace: one int per
// (context, stream), so that launches on different streams, which may run at the same time, never
// share one. The per-thread default stream is a different stream in each thread, and is told
// apart by thread. Freed in their context with the registry.
#pragma once

#include <cuda.h>

#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "driver/device_context.hpp"

namespace swr {

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
