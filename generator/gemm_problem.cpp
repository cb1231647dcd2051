#include "swr/gemm_problem.hpp"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "generator/json_int_field.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

void require_positive(const char* name, int value) {
  if (value < 1) {
    throw UsageError(std::string("GEMM ") + name + " must be at least 1 (got " +
                     std::to_string(value) + ")");
  }
}

// cp.async copies 16-byte chunks, so the rows of A (k elements) and B (n elements) must start
// 16-byte aligned; the kernels have no narrower path.
void require_aligned(const char* name, int value) {
  if (value % kGemmAlignment != 0) {
    throw UsageError(std::string("GEMM ") + name + " " + std::to_string(value) +
                     " is not supported: no variant handles it; " + name +
                     " must be a multiple of " + std::to_string(kGemmAlignment) +
                     " (16-byte rows for cp.async)");
  }
}

// Offsets inside the kernel are 32-bit ints.
void require_fits_int(const char* matrix, int rows, int cols) {
  const std::int64_t elements = static_cast<std::int64_t>(rows) * cols;
  if (elements > std::numeric_limits<std::int32_t>::max()) {
    throw UsageError(std::string("GEMM matrix ") + matrix + " (" + std::to_string(rows) + " x " +
                     std::to_string(cols) + ") has " + std::to_string(elements) +
                     " elements: more than 32-bit indexing allows (2^31 - 1)");
  }
}

}  // namespace

void GemmProblem::validate() const {
  require_positive("m", m);
  require_positive("n", n);
  require_positive("k", k);
  if (dtype != DataType::f16 && dtype != DataType::bf16) {
    throw UsageError("unsupported data type (allowed: f16, bf16)");
  }
  require_aligned("k", k);
  require_aligned("n", n);
  require_fits_int("A", m, k);
  require_fits_int("B", k, n);
  require_fits_int("C", m, n);
}

double GemmProblem::flops() const {
  return 2.0 * m * static_cast<double>(n) * k;
}

double GemmProblem::compulsory_bytes() const {
  const double elements =
      static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n;
  return elements * static_cast<double>(element_bytes(dtype));
}

std::string GemmProblem::key() const {
  std::string key = "m";
  key += std::to_string(m);
  key += "_n" + std::to_string(n);
  key += "_k" + std::to_string(k);
  key += "_";
  key += to_string(dtype);
  return key;
}

nlohmann::json GemmProblem::to_json() const {
  return {{"m", m}, {"n", n}, {"k", k}, {"dtype", std::string(to_string(dtype))}};
}

GemmProblem GemmProblem::from_json(const nlohmann::json& json) {
  GemmProblem problem;
  problem.m = json_int_field(json, "m");
  problem.n = json_int_field(json, "n");
  problem.k = json_int_field(json, "k");
  const std::string type = json.at("dtype").get<std::string>();
  const std::optional<DataType> parsed = parse_data_type(type);
  if (!parsed) throw std::invalid_argument("unknown dtype '" + type + "' in a GEMM problem");
  problem.dtype = *parsed;
  return problem;
}

}  // namespace swr
