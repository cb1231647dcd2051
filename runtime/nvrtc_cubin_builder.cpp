// CubinBuilder through NVRTC and the cubin cache, as the tuner compiles (parallel_compiler.hpp,
// both families): the same rendering, options and cache key, so the source hash compares.
#include <stdexcept>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "generator/cubin_cache.hpp"
#include "generator/gemm_kernel_source.hpp"
#include "generator/kernel_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "runtime/cubin_builder.hpp"

namespace swr {
namespace {

class NvrtcCubinBuilder : public CubinBuilder {
 public:
  explicit NvrtcCubinBuilder(const std::filesystem::path& cache_dir) : cache_(cache_dir) {}

  BuiltCubin build(const AttentionProblem& problem, const AttentionConfig& config,
                   const std::string& arch) const override {
    return compile(render_attention_kernel(problem, config), config.key(), arch);
  }

  BuiltCubin build(const GemmProblem& problem, const GemmConfig& config,
                   const std::string& arch) const override {
    return compile(render_gemm_kernel(problem, config), config.key(), arch);
  }

  BuiltCubin build(const AttentionBackwardProblem& problem, const AttentionBackwardConfig& config,
                   const std::string& arch) const override {
    return compile(render_attention_backward_kernel(problem, config), config.key(), arch);
  }

 private:
  BuiltCubin compile(const KernelSource& source, const std::string& label,
                     const std::string& arch) const {
    const std::string key =
        CubinCache::key_for(source, compiler_.options_for(arch), compiler_.version(), arch);
    std::optional<CompiledKernel> kernel = cache_.load(key);
    const bool from_cache = kernel.has_value();
    if (!kernel) {
      kernel = compiler_.compile(source, arch);
      if (!kernel->ok) {
        throw std::runtime_error("NVRTC could not compile " + label + " for " + arch + ": " +
                                 kernel->log);
      }
      cache_.store(key, *kernel);
    }
    BuiltCubin built;
    built.cubin = std::move(kernel->cubin);
    built.source_hash = key;
    built.toolkit_version = compiler_.version();
    if (kernel->registers >= 0) built.registers = kernel->registers;
    built.from_cache = from_cache;
    return built;
  }

  NvrtcCompiler compiler_;
  CubinCache cache_;
};

}  // namespace

std::unique_ptr<CubinBuilder> make_nvrtc_cubin_builder(const std::filesystem::path& cache_dir) {
  return std::make_unique<NvrtcCubinBuilder>(cache_dir);
}

}  // namespace swr
