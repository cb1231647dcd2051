#include "cli/gemm_options.hpp"

#include "cli/problem_options.hpp"
#include "swr/usage_error.hpp"

namespace swr::cli {

void add_gemm_shape_options(CLI::App& command, GemmOptions& options) {
  command.add_option("--family", options.family, "Kernel family: attention, gemm")
      ->type_name("NAME")
      ->capture_default_str();
  command.add_option("--m", options.m, "GEMM: rows of A and C")->type_name("M");
  command.add_option("--n", options.n, "GEMM: columns of B and C (a multiple of 8)")
      ->type_name("N");
  command.add_option("--k", options.k, "GEMM: columns of A, rows of B (a multiple of 8)")
      ->type_name("K");
  command.add_option("--size", options.size, "GEMM: square problem, m = n = k = S")->type_name("S");
}

void add_gemm_options(CLI::App& command, GemmOptions& options) {
  add_gemm_shape_options(command, options);
  command.add_flag("--sweep", options.sweep,
                   "GEMM: the swizzle sweep of the paper (sizes 512..16384 x strides 0..8192), "
                   "with its tables of best stride, sensitivity and ratio to cuBLAS");
  command
      .add_option("--sweep-out", options.sweep_out,
                  "GEMM sweep: directory for its tables (default bench/results/gemm-sweep-GPU)")
      ->type_name("DIR");
}

bool is_gemm_family(const GemmOptions& options) {
  if (options.family == "gemm") return true;
  if (options.family != "attention") {
    throw UsageError("bad --family '" + options.family + "': allowed attention, gemm");
  }
  const bool gemm_option = !options.m.empty() || !options.n.empty() || !options.k.empty() ||
                           !options.size.empty() || options.sweep || !options.sweep_out.empty();
  if (gemm_option) {
    throw UsageError(
        "--m, --n, --k, --size, --sweep and --sweep-out belong to the GEMM family: allowed with "
        "--family gemm");
  }
  return false;
}

GemmProblem single_gemm_problem(const GemmOptions& options, DataType dtype) {
  GemmProblem problem;
  problem.dtype = dtype;
  if (!options.size.empty()) {
    if (!options.m.empty() || !options.n.empty() || !options.k.empty()) {
      throw UsageError("--size and --m/--n/--k exclude each other: allowed one of them");
    }
    problem.m = problem.n = problem.k = parse_positive(options.size, "--size");
  } else {
    if (options.m.empty() || options.n.empty() || options.k.empty()) {
      throw UsageError("missing GEMM size: allowed --m M --n N --k K, or --size S (square)");
    }
    problem.m = parse_positive(options.m, "--m");
    problem.n = parse_positive(options.n, "--n");
    problem.k = parse_positive(options.k, "--k");
  }
  problem.validate();
  return problem;
}

}  // namespace swr::cli
