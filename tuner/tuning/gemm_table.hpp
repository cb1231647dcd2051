// The GEMM tables: the fastest variants of a problem with their ratio to cuBLAS measured in the
// same run (the tuner's closing table and `swr-tune show --family gemm`).
#pragma once

#include <iosfwd>
#include <vector>

#include "db/records.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/tuning/gemm_variant_record.hpp"

namespace swr {

// Header (problem, GPU, counts), the cuBLAS line (or why it is missing), then the `rows` fastest
// valid variants: key, median ms, TFLOP/s, x cuBLAS, L2 hit rate, DRAM GB; failures are counted.
void print_gemm_table(std::ostream& out, const GemmProblem& problem, const GpuProfile& gpu,
                      const std::vector<db::StoredMeasurement>& measurements,
                      const GemmBaseline& baseline, std::size_t rows);

}  // namespace swr
