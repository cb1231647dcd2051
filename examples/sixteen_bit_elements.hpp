// IEEE half and bfloat16 on the host, round to nearest even: the kernels' 2-byte elements, for the
// example programs (which see swr's public headers only).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace swr_example {

inline std::uint16_t to_half(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  std::uint32_t mantissa = bits & 0x7fffffu;
  if (exponent <= 0) {  // subnormal (inputs here are never large enough to overflow)
    if (exponent < -10) return static_cast<std::uint16_t>(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - exponent;
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    if (rest > (1u << (shift - 1)) || (rest == (1u << (shift - 1)) && (half & 1))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

inline float from_half(std::uint16_t half) {
  const int exponent = (half >> 10) & 0x1f;
  const int mantissa = half & 0x3ff;
  float value = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                              : std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  if (exponent == 31) value = mantissa ? NAN : INFINITY;
  return (half & 0x8000) ? -value : value;
}

inline std::uint16_t to_bfloat16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

inline float from_bfloat16(std::uint16_t bits16) {
  const std::uint32_t bits = static_cast<std::uint32_t>(bits16) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

}  // namespace swr_example
