// Host-side conversions between float and the kernels' 16-bit element types (round to nearest
// even).
#pragma once

#include <cstdint>

#include "swr/data_type.hpp"

namespace swr {

std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t bits);
std::uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(std::uint16_t bits);

std::uint16_t float_to_element(DataType type, float value);
float element_to_float(DataType type, std::uint16_t bits);

}  // namespace swr
