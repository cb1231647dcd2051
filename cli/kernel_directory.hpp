// `compile --out DIR`: every compiled cubin as DIR/<config key>.cubin plus DIR/kernels.json, the
// manifest a program needs to load and launch them. Each file is written to a temporary name and
// renamed, and the manifest goes last, so a reader never sees a half-written set.
#pragma once

#include <filesystem>

#include "cli/variant_compilation.hpp"

namespace swr::cli {

// "grid", "static" or "dynamic": how the launcher sizes the grid for a persistence mode.
std::string grid_rule(Persistence persistence);

// Writes the variants that compiled (failed ones are listed in the manifest's "failed").
void write_kernel_directory(const std::filesystem::path& directory, const Target& target,
                            const CompileOutcome& outcome);

}  // namespace swr::cli
