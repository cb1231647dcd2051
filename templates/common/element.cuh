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

// pack_pair's inverse: the two 16-bit values of `packed` as floats (exact).
template <Element E>
__device__ __forceinline__ float2 unpack_pair(unsigned packed) {
  float2 pair;
  if constexpr (E == Element::f16) {
    asm("{\n.reg .f16 low, high;\n"
        "mov.b32 {low, high}, %2;\n"
        "cvt.f32.f16 %0, low;\n"
        "cvt.f32.f16 %1, high;\n}"
        : "=f"(pair.x), "=f"(pair.y)
        : "r"(packed));
  } else {
    pair.x = __uint_as_float(packed << 16);
    pair.y = __uint_as_float(packed & 0xffff0000u);
  }
  return pair;
}

}  // namespace swr
