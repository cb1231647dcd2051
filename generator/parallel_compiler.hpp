// Compiles many variants on a pool of threads through the cubin cache, reporting each result as
// it finishes, so that a caller can measure variant i while variant i+1 compiles.
#pragma once

#include <functional>
#include <vector>

#include "generator/cubin_cache.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"

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

}  // namespace swr
