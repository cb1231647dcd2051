// Compiling the kernel binaries a list of GEMM configs needs: configs that differ only in their
// swizzle share one binary (the swizzle is a launch argument), so each distinct binary is
// rendered and compiled once, on a pool of threads, through the cubin cache.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "generator/cubin_cache.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

struct GemmBinary {
  KernelSource source;
  CompiledKernel kernel;  // kernel.ok false: the log says why
};

// Keyed by gemm_binary_name(problem, config). threads <= 0: hardware threads.
std::map<std::string, GemmBinary> compile_gemm_binaries(const NvrtcCompiler& compiler,
                                                        const CubinCache* cache,
                                                        const GemmProblem& problem,
                                                        const std::vector<GemmConfig>& configs,
                                                        const std::string& arch, int threads);

}  // namespace swr
