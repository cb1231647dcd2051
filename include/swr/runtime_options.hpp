// What every runtime launcher (swr::Attention, swr::Gemm) shares: CUDA handles as opaque values,
// so that the public headers need no <cuda.h>, the options that say where cubins may come from,
// and the error raised when a call cannot run.
//
// A CUstream converts to StreamHandle (void*) as it is, a CUdeviceptr to DevicePointer
// (std::uint64_t).
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include "swr/export.h"

namespace swr {

using StreamHandle = void*;           // a CUstream; nullptr is the legacy default stream
using DevicePointer = std::uint64_t;  // a CUdeviceptr

struct RuntimeOptions {
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
class SWR_API KernelRefused : public std::runtime_error {
 public:
  explicit KernelRefused(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace swr
