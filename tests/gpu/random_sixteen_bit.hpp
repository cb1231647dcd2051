// Uniform random 16-bit inputs in [-1, 1) for the attention GPU tests (fresh per run), and keys
// ramped along the sequence.
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

// Keys [rows of seq][head_dim] per head, contiguous, row j scaled by 1 + 48 (j / seq)^2: a row's
// top score grows along the keys, over eight tiles by about 3, 5 and 7 (base 2) a tile in the
// first ones and 9 to 15 in the last. So the max the softmax takes P against is kept over some
// tiles (P above 1, up to 2^8) and raised in others; uniform keys raise it in the first tile only.
inline void ramp_keys(DataType type, std::vector<std::uint16_t>& keys, int seq, int head_dim) {
  const std::size_t row_elements = static_cast<std::size_t>(head_dim);
  for (std::size_t row = 0; row < keys.size() / row_elements; ++row) {
    const float at = static_cast<float>(row % static_cast<std::size_t>(seq)) / seq;
    const float scale = 1.f + 48.f * at * at;
    for (std::size_t i = row * row_elements; i < (row + 1) * row_elements; ++i)
      keys[i] = float_to_element(type, element_to_float(type, keys[i]) * scale);
  }
}

}  // namespace swr::gpu_test
