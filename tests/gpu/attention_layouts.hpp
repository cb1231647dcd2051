// What the attention GPU tests share about tensor storage: a [B, H, S, D] tensor kept as it is
// (BHSD) or as the [B, S, H, D] projection a model produces (BSHD), its element strides as
// swr::AttentionTensors takes them, and host copies moved between the contiguous order the CPU
// reference uses and that storage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "swr/attention.hpp"

namespace swr::gpu_test {

enum class Storage { bhsd, bshd };

inline const char* storage_name(Storage storage) {
  return storage == Storage::bhsd ? "bhsd" : "bshd";
}

// One tensor's dims as the kernels index them.
struct TensorDims {
  int batch, heads, seq, head_dim;
  std::size_t elements() const { return static_cast<std::size_t>(batch) * heads * seq * head_dim; }
};

inline ElementStrides strides_of(Storage storage, const TensorDims& dims) {
  const std::int64_t d = dims.head_dim;
  if (storage == Storage::bhsd) {
    return {static_cast<std::int64_t>(dims.heads) * dims.seq * d, dims.seq * d, d, 1};
  }
  return {static_cast<std::int64_t>(dims.seq) * dims.heads * d, d, dims.heads * d, 1};
}

// Element (b, h, s, c) of a contiguous [B, H, S, D] vector, placed where `storage` keeps it
// (to == true), or gathered back from there (to == false).
inline std::vector<std::uint16_t> moved(const std::vector<std::uint16_t>& from, Storage storage,
                                        const TensorDims& dims, bool to) {
  std::vector<std::uint16_t> out(from.size());
  const ElementStrides strides = strides_of(storage, dims);
  std::size_t contiguous = 0;
  for (int b = 0; b < dims.batch; ++b)
    for (int h = 0; h < dims.heads; ++h)
      for (int s = 0; s < dims.seq; ++s) {
        const std::size_t stored =
            static_cast<std::size_t>(b * strides.batch + h * strides.head + s * strides.seq);
        for (int c = 0; c < dims.head_dim; ++c, ++contiguous) {
          if (to) {
            out[stored + c] = from[contiguous];
          } else {
            out[contiguous] = from[stored + c];
          }
        }
      }
  return out;
}

inline std::vector<std::uint16_t> stored(const std::vector<std::uint16_t>& contiguous,
                                         Storage storage, const TensorDims& dims) {
  return moved(contiguous, storage, dims, true);
}
inline std::vector<std::uint16_t> gathered(const std::vector<std::uint16_t>& stored_values,
                                           Storage storage, const TensorDims& dims) {
  return moved(stored_values, storage, dims, false);
}

}  // namespace swr::gpu_test
