// What both example programs print about the catalog's answer, what they do without a GPU (the
// lookup only), and whether NVRTC was ever loaded (an export must run without it). Public headers
// only, like the examples themselves.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <optional>
#include <string>

#include "example_main.hpp"
#include "swr/device_buffer.hpp"
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

}  // namespace swr_example
