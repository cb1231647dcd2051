#include "runtime/launch_checks.hpp"

#include <cstdlib>
#include <initializer_list>
#include <utility>

namespace swr {

std::string variant_mismatch(const TunedKernel& kernel, const AttentionProblem& problem) {
  const AttentionProblem& compiled = kernel.problem;
  std::string differs;
  auto add = [&differs](const std::string& what) {
    differs += (differs.empty() ? "" : ", ") + what;
  };
  if (compiled.head_dim != problem.head_dim) {
    add("head dim " + std::to_string(compiled.head_dim) + ", asked " +
        std::to_string(problem.head_dim));
  }
  if (compiled.dtype != problem.dtype) {
    add("dtype " + std::string(to_string(compiled.dtype)) + ", asked " +
        std::string(to_string(problem.dtype)));
  }
  if (compiled.causal != problem.causal) {
    add(compiled.causal ? "causal, asked non-causal" : "non-causal, asked causal");
  }
  if (differs.empty()) return {};
  return "variant " + kernel.config_key + " is compiled for " + differs;
}

std::string variant_mismatch(const TunedGemmKernel& kernel, const GemmProblem& problem) {
  if (kernel.problem.dtype == problem.dtype) return {};
  return "variant " + kernel.config_key + " is compiled for dtype " +
         std::string(to_string(kernel.problem.dtype)) + ", asked " +
         std::string(to_string(problem.dtype));
}

namespace {

std::string null_pointers(std::initializer_list<std::pair<const char*, DevicePointer>> pointers) {
  std::string missing;
  for (const auto& [name, pointer] : pointers) {
    if (pointer == 0) missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
  return missing.empty() ? std::string() : "null device pointer for " + missing;
}

}  // namespace

std::string tensor_mismatch(const AttentionTensors& tensors) {
  return null_pointers({{"q", tensors.q}, {"k", tensors.k}, {"v", tensors.v}, {"o", tensors.o}});
}

std::string tensor_mismatch(const GemmTensors& tensors) {
  return null_pointers({{"a", tensors.a}, {"b", tensors.b}, {"c", tensors.c}});
}

bool nvrtc_allowed(const RuntimeOptions& options) {
  if (!options.allow_nvrtc) return false;
  const char* setting = std::getenv("SWR_RUNTIME_NVRTC");
  if (setting == nullptr) return true;
  const std::string value = setting;
  return !(value == "0" || value == "off" || value == "false" || value == "no");
}

}  // namespace swr
