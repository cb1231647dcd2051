// The GEMM family's options of the main job: `swr-tune --family gemm --gpu G --m M --n N --k K`
// (or --size S for a square problem), or `--sweep` over the paper's sizes and strides.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace swr::cli {

struct GemmOptions {
  std::string family = "attention";  // --family attention|gemm
  std::string m, n, k;               // --m --n --k
  std::string size;                  // --size: m = n = k
  bool sweep = false;                // --sweep: the paper's sizes x strides
  std::string sweep_out;             // --sweep-out DIR (default bench/results/gemm-sweep-<gpu>)
};

void add_gemm_options(CLI::App& command, GemmOptions& options);

// True for --family gemm; UsageError for a family that does not exist, or GEMM options given
// without --family gemm.
bool is_gemm_family(const GemmOptions& options);

}  // namespace swr::cli
