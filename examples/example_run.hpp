// What both example programs do around their launch: print the catalog's answer, do the lookup
// only where there is no GPU, make random inputs rounded to the element type (the 16-bit words for
// the device, the same values as floats for the reference), check the output against the
// reference (relative L2 error, non-finite elements, the verdict line), and say whether NVRTC was
// ever loaded (an export must run without it). Public headers only, like the examples themselves.
#pragma once

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "example_main.hpp"
#include "swr/data_type.hpp"
#include "swr/device_buffer.hpp"
#include "swr/sixteen_bit.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr_example {

inline bool nvrtc_loaded() {
  void* handle = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

// "lookup: exact, variant ... tuned for ... on h200 (sm_90a), 0.0101 ms measured[, distance d]"
template <class Kernel>
void print_choice(const swr::TunedChoiceOf<Kernel>& choice) {
  if (!choice) {
    std::printf("lookup: none (%s)\n", choice.why_none.c_str());
    return;
  }
  const Kernel& kernel = *choice.kernel;
  std::printf("lookup: %s, variant %s tuned for %s on %s (%s), %.4f ms measured",
              std::string(swr::to_string(choice.match)).c_str(), kernel.config_key.c_str(),
              kernel.problem.key().c_str(), kernel.gpu.c_str(), kernel.arch.c_str(),
              kernel.measured.median_ms);
  if (choice.match == swr::MatchKind::nearest) std::printf(", distance %.2f", choice.distance);
  std::printf("\n");
}

// Prints the catalog and the problem; without a device, also what the lookup answers (with --gpu)
// and why nothing launches, and returns the exit code. nullopt: a device is there, go on.
template <class Problem>
std::optional<int> lookup_only_without_device(const swr::TunedCatalog& catalog,
                                              const CommonArguments& common,
                                              const Problem& problem) {
  std::printf("catalog: %s\nproblem: %s\n", catalog.description().c_str(), problem.key().c_str());
  std::string why;
  if (swr::cuda_device_present(&why)) return std::nullopt;
  if (!common.gpu.empty()) print_choice(catalog.best(common.gpu, problem));
  std::printf("launch: skipped, %s\n", why.c_str());
  return common.require_gpu ? 1 : 0;
}

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
