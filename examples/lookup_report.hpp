// What both example programs print about the catalog's answer, and whether NVRTC was ever loaded
// (an export must run without it). Public headers only, like the examples themselves.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <string>

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

}  // namespace swr_example
