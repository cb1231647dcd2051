// One GEMM problem: C = A · B with A [m x k], B [k x n] and C [m x n], all row-major (the layout of
// a contiguous `a @ b` in PyTorch; cuBLAS sees it as C^T = B^T · A^T in column-major terms).
// fp16 or bf16 in and out, fp32 accumulation.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "swr/data_type.hpp"
#include "swr/export.h"

namespace swr {

struct SWR_API GemmProblem {
  int m = 0;
  int n = 0;
  int k = 0;
  DataType dtype = DataType::f16;

  // Throws UsageError naming the bad value and the rule: every size at least 1; n and k multiples
  // of 8 (rows of B and A start 16-byte aligned, as cp.async needs); every matrix below 2^31
  // elements (the kernel indexes with 32-bit offsets).
  void validate() const;

  // 2·m·n·k.
  double flops() const;

  // Bytes of A, B and C together: what the GEMM must move at least once.
  double compulsory_bytes() const;

  // e.g. "m4096_n4096_k4096_f16"
  std::string key() const;

  // {"m", "n", "k", "dtype"}: the one JSON form (the worker protocol, the database's problems
  // rows; compile results, catalog answers and exports add "key" and "family" to it, see
  // generator/problem_json.hpp). from_json throws std::invalid_argument for an unknown dtype or a
  // size that is not an integer that fits an int, and nlohmann::json's errors for a missing field;
  // it does not validate.
  nlohmann::json to_json() const;
  static GemmProblem from_json(const nlohmann::json& json);

  bool operator==(const GemmProblem&) const = default;
};

// n and k must be multiples of this (16 bytes of 16-bit elements).
inline constexpr int kGemmAlignment = 8;

}  // namespace swr
