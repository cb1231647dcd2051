// Host-side conversions between float and the kernels' 16-bit elements (fp16, bf16), on the raw
// bits a DeviceBuffer of std::uint16_t holds. The conversions are CUDA's own host code (round to
// nearest even), so this header needs the CUDA toolkit's include directory, unlike the others.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "swr/data_type.hpp"

namespace swr {

inline std::uint16_t float_to_element(DataType type, float value) {
  return type == DataType::f16 ? static_cast<__half_raw>(__float2half_rn(value)).x
                               : static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(value)).x;
}

inline float element_to_float(DataType type, std::uint16_t bits) {
  return type == DataType::f16 ? __half2float(__half(__half_raw{bits}))
                               : __bfloat162float(__nv_bfloat16(__nv_bfloat16_raw{bits}));
}

}  // namespace swr
