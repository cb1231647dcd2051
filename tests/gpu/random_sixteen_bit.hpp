// Uniform random 16-bit inputs in [-1, 1) for the attention GPU tests (fresh per run).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "swr/data_type.hpp"
#include "swr/sixteen_bit.hpp"

namespace swr::gpu_test {

inline std::vector<std::uint16_t> random_elements(DataType type, std::size_t count,
                                                  std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<std::uint16_t> values(count);
  for (auto& v : values) v = float_to_element(type, uniform(rng));
  return values;
}

}  // namespace swr::gpu_test
