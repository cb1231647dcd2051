// The JSON forms of a problem beyond its fields (AttentionProblem::to_json, GemmProblem::to_json):
// with its key, as compile results, kernel directories and the catalog's answers write it, and with
// its family too, as an export's manifest writes it. Readers take the fields with from_json (or,
// for outside input, field by field with named errors: runtime/manifest_entries.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include "generator/kernel_family.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

inline const char* problem_family_name(const AttentionProblem&) {
  return kAttentionFamilyName;
}
inline const char* problem_family_name(const AttentionBackwardProblem&) {
  return kAttentionBackwardFamilyName;
}
inline const char* problem_family_name(const GemmProblem&) {
  return kGemmFamilyName;
}

// The fields plus "key".
template <class Problem>
nlohmann::json keyed_problem_json(const Problem& problem) {
  nlohmann::json json = problem.to_json();
  json["key"] = problem.key();
  return json;
}

// The fields plus "key" and "family".
template <class Problem>
nlohmann::json family_problem_json(const Problem& problem) {
  nlohmann::json json = keyed_problem_json(problem);
  json["family"] = problem_family_name(problem);
  return json;
}

}  // namespace swr
