// Generic pointer -> 32-bit shared-window address, as the shared-memory PTX instructions take it.
#pragma once

namespace swr {

__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

}  // namespace swr
