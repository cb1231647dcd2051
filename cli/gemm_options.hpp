// The GEMM family's options of the main job: `swr-tune --family gemm --gpu G --m M --n N --k K`
// (or --size S for a square problem), or `--sweep` over the paper's sizes and strides.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "swr/gemm_problem.hpp"

namespace swr::cli {

struct GemmOptions {
  std::string family = "attention";  // --family attention|gemm
  std::string m, n, k;               // --m --n --k
  std::string size;                  // --size: m = n = k
  bool sweep = false;                // --sweep: the paper's sizes x strides
  std::string sweep_out;             // --sweep-out DIR (default bench/results/gemm-sweep-<gpu>)
};

// --family, --m, --n, --k and --size: what names one GEMM shape (tune, show, query).
void add_gemm_shape_options(CLI::App& command, GemmOptions& options);
// The shape options, plus --sweep and --sweep-out (tune).
void add_gemm_options(CLI::App& command, GemmOptions& options);

// The one shape --m/--n/--k or --size names, validated. UsageError when both forms or neither are
// given, or for a bad value.
GemmProblem single_gemm_problem(const GemmOptions& options, DataType dtype);

// True for --family gemm; UsageError for a family that does not exist, or GEMM options given
// without --family gemm.
bool is_gemm_family(const GemmOptions& options);

}  // namespace swr::cli
