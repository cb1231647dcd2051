// Compiling a tuned variant's cubin, for `swr-tune export` and as the runtime's last resort: the
// tuner's rendering, NVRTC options and cubin cache, so that the build's source hash can be
// compared with the one that was measured. An interface, so that export can be tested without
// NVRTC.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

struct BuiltCubin {
  std::vector<char> cubin;
  std::string source_hash;  // the cubin cache key: source, headers, options, NVRTC version, arch
  std::string toolkit_version;
  std::optional<int> registers;
  bool from_cache = false;
};

class CubinBuilder {
 public:
  virtual ~CubinBuilder() = default;
  // `problem` gives the compiled part (head dim, dtype, causal). Throws std::runtime_error with
  // the NVRTC log when the variant does not compile. Thread-safe.
  virtual BuiltCubin build(const AttentionProblem& problem, const AttentionConfig& config,
                           const std::string& arch) const = 0;
  // A GEMM variant: `problem` gives the compiled part (dtype); configs that differ only in their
  // swizzle build the same cubin.
  virtual BuiltCubin build(const GemmProblem& problem, const GemmConfig& config,
                           const std::string& arch) const = 0;
  // An attention backward module (its three kernels); `problem` gives the forward shape's
  // compiled part.
  virtual BuiltCubin build(const AttentionBackwardProblem& problem,
                           const AttentionBackwardConfig& config, const std::string& arch) const {
    (void)problem;
    (void)config;
    throw std::runtime_error("this cubin builder does not build attention backward modules (" +
                             arch + ")");
  }
};

// Throws std::runtime_error when NVRTC cannot be loaded.
std::unique_ptr<CubinBuilder> make_nvrtc_cubin_builder(const std::filesystem::path& cache_dir);

}  // namespace swr
