// `compile --out DIR`: every compiled cubin as DIR/<config key>.cubin (attention) or
// DIR/<binary name>.cubin (GEMM) plus DIR/kernels.json, the manifest a program needs to load and
// launch them. Each file is written to a temporary name and
// renamed, and the manifest goes last, so a reader never sees a half-written set.
#pragma once

#include <filesystem>

#include "tuner/gemm_compilation.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

// "grid", "static" or "dynamic": how the launcher sizes the grid for a persistence mode.
std::string grid_rule(Persistence persistence);

// Writes the variants that compiled (failed ones are listed in the manifest's "failed").
void write_kernel_directory(const std::filesystem::path& directory, const Target& target,
                            const CompileOutcome& outcome);

// GEMM: one entry per tile binary with its entry point, threads, shared memory, grid rule and tile
// count, and the variants it serves with their swizzle launch arguments (swizzle_axis,
// swizzle_group), which the kernel takes after (a, b, c, m, n, k).
void write_kernel_directory(const std::filesystem::path& directory, const GemmTarget& target,
                            const GemmCompileOutcome& outcome);

}  // namespace swr
