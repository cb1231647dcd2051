// What both example programs do around their launch: random inputs rounded to the element type
// (the 16-bit words for the device, the same values as floats for the reference), and the check of
// the output against the reference (relative L2 error, non-finite elements, the verdict line).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "swr/data_type.hpp"
#include "swr/sixteen_bit.hpp"

namespace swr_example {

struct RoundedInput {
  std::vector<std::uint16_t> words;  // what the kernel reads
  std::vector<float> values;         // the same, as floats, for the reference
};

inline RoundedInput random_input(swr::DataType dtype, std::size_t count, std::mt19937& random) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  RoundedInput input{std::vector<std::uint16_t>(count), std::vector<float>(count)};
  for (std::size_t i = 0; i < count; ++i) {
    input.words[i] = swr::float_to_element(dtype, uniform(random));
    input.values[i] = swr::element_to_float(dtype, input.words[i]);
  }
  return input;
}

// Sums what the checked elements are off by; pass() is the verdict for the dtype's rounding.
struct ErrorTally {
  double error = 0, norm = 0;
  long long non_finite = 0;

  void add(float got, double expected) {
    if (!std::isfinite(got)) ++non_finite;
    error += (got - expected) * (got - expected);
    norm += expected * expected;
  }
  double relative() const { return std::sqrt(error / norm); }
  static double tolerance(swr::DataType dtype) { return dtype == swr::DataType::f16 ? 2e-3 : 1e-2; }
  bool pass(swr::DataType dtype) const { return non_finite == 0 && relative() < tolerance(dtype); }
  // "check: N rows, relative error 1.23e-04 (bound 2e-03), 0 non-finite: PASS"
  void print(long long checked, const char* what, swr::DataType dtype) const {
    std::printf("check: %lld %s, relative error %.2e (bound %.0e), %lld non-finite: %s\n", checked,
                what, relative(), tolerance(dtype), non_finite, pass(dtype) ? "PASS" : "FAIL");
  }
};

}  // namespace swr_example
