// Compiles many variants on a pool of threads through the cubin cache: attention variants, each
// result reported as it finishes (so that a caller can measure variant i while variant i+1
// compiles), and the kernel binaries a list of GEMM configs needs.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "generator/cubin_cache.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

struct CompileJob {
  AttentionProblem problem;
  AttentionConfig config;
  std::string arch;
};

struct CompileResult {
  CompileJob job;
  KernelSource source;
  CompiledKernel kernel;
};

// Calls on_result from the calling thread, in completion order. jobs <= 0 means hardware threads.
void compile_in_parallel(const NvrtcCompiler& compiler, const CubinCache* cache,
                         const std::vector<CompileJob>& jobs, int threads,
                         const std::function<void(const CompileResult&)>& on_result);

// Compiles (or loads from the cache) every source for `arch` on a pool of threads, whatever its
// family, calling on_result(index into `sources`, kernel) from the calling thread in completion
// order, so that a caller can measure one while the next compiles. An exception of on_result
// stops the compiles not yet started and is rethrown once the ones in flight end.
void compile_sources_in_parallel(
    const NvrtcCompiler& compiler, const CubinCache* cache,
    const std::vector<KernelSource>& sources, const std::string& arch, int threads,
    const std::function<void(std::size_t, CompiledKernel&&)>& on_result);

// Compiles (or loads from the cache) every source for `arch` on a pool of `threads` threads
// (<= 0: hardware threads), whatever its family; the results in the order of `sources`.
std::vector<CompiledKernel> compile_sources(const NvrtcCompiler& compiler, const CubinCache* cache,
                                            const std::vector<KernelSource>& sources,
                                            const std::string& arch, int threads);

struct GemmBinary {
  KernelSource source;
  CompiledKernel kernel;  // kernel.ok false: the log says why
};

// Configs that differ only in their swizzle share one binary (the swizzle is a launch argument),
// so each distinct binary is rendered and compiled once. Keyed by gemm_binary_name(problem,
// config). threads <= 0: hardware threads.
std::map<std::string, GemmBinary> compile_gemm_binaries(const NvrtcCompiler& compiler,
                                                        const CubinCache* cache,
                                                        const GemmProblem& problem,
                                                        const std::vector<GemmConfig>& configs,
                                                        const std::string& arch, int threads);

}  // namespace swr
