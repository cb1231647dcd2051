#include "tuner/gemm_reference.hpp"

#include <algorithm>
#include <cmath>

#include "support/parallel_for.hpp"
#include "swr/sixteen_bit.hpp"

namespace swr {
namespace {

template <class Reference>
OutputComparison compare(DataType type, const std::vector<std::uint16_t>& output,
                         const Reference& reference_at, std::size_t count) {
  OutputComparison result;
  double difference = 0;
  double norm = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double value = element_to_float(type, output[i]);
    const double expected = reference_at(i);
    if (!std::isfinite(value)) {
      ++result.non_finite;
      continue;
    }
    difference += (value - expected) * (value - expected);
    norm += expected * expected;
  }
  result.relative_error = norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
  return result;
}

}  // namespace

std::vector<double> reference_gemm(const GemmProblem& problem, const std::vector<std::uint16_t>& a,
                                   const std::vector<std::uint16_t>& b) {
  const std::size_t m = problem.m, n = problem.n, k = problem.k;
  std::vector<double> b_values(k * n);
  for (std::size_t i = 0; i < b_values.size(); ++i)
    b_values[i] = element_to_float(problem.dtype, b[i]);
  std::vector<double> c(m * n, 0.0);
  parallel_for(m, 0, [&](std::size_t row) {
    double* c_row = &c[row * n];
    for (std::size_t kk = 0; kk < k; ++kk) {
      const double a_value = element_to_float(problem.dtype, a[row * k + kk]);
      const double* b_row = &b_values[kk * n];
      for (std::size_t col = 0; col < n; ++col) c_row[col] += a_value * b_row[col];
    }
  });
  return c;
}

OutputComparison compare_gemm_output(DataType type, const std::vector<std::uint16_t>& output,
                                     const std::vector<double>& reference) {
  return compare(
      type, output, [&](std::size_t i) { return reference[i]; },
      std::min(output.size(), reference.size()));
}

OutputComparison compare_gemm_output(DataType type, const std::vector<std::uint16_t>& output,
                                     const std::vector<std::uint16_t>& reference) {
  return compare(
      type, output, [&](std::size_t i) { return double(element_to_float(type, reference[i])); },
      std::min(output.size(), reference.size()));
}

}  // namespace swr
