// The 16-bit element types, as raw bits: the templates need no cuda_fp16.h (NVRTC 13.0 ships none).
#pragma once

namespace swr {

enum class Element { f16, bf16 };

// Two floats -> one register of two 16-bit values, `low` in the low half (round to nearest).
template <Element E>
__device__ __forceinline__ unsigned pack_pair(float low, float high) {
  unsigned packed;
  if constexpr (E == Element::f16) {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(high), "f"(low));
  } else {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(high), "f"(low));
  }
  return packed;
}

}  // namespace swr
