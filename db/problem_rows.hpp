// The rows that name a problem (problems plus its family's shape table) or a config (configs),
// found or written inside the caller's transaction: ResultsDatabase's upserts and import write
// them alike, whichever family.
#pragma once

#include <SQLiteCpp/Database.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "db/records.hpp"
#include "generator/kernel_family.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr::db {

class StatementCache;
class ColumnReader;

inline constexpr const char* kAttentionFamily = kAttentionFamilyName;
inline constexpr const char* kAttentionBackwardFamily = kAttentionBackwardFamilyName;
inline constexpr const char* kGemmFamily = kGemmFamilyName;

// problems.family of a problem or config type.
inline const char* family_of(const AttentionProblem&) {
  return kAttentionFamily;
}
inline const char* family_of(const GemmProblem&) {
  return kGemmFamily;
}
inline const char* family_of(const AttentionBackwardProblem&) {
  return kAttentionBackwardFamily;
}
inline const char* family_of(const AttentionBackwardConfig&) {
  return kAttentionBackwardFamily;
}
inline const char* family_of(const AttentionConfig&) {
  return kAttentionFamily;
}
inline const char* family_of(const GemmConfig&) {
  return kGemmFamily;
}

// The attention_problems columns of a shape as a SELECT lists them, `alias` naming the table:
// batch, heads, seq_q, seq_kv, head_dim, dtype, causal, kv_heads, causal_align. Files of a schema
// before kv_heads and causal_align existed (read-only: versions 2 and 3) hold multi-head, top-left
// shapes only, and are read as such.
std::string attention_shape_columns(const std::string& alias, int schema_version);
// Reads those columns in that order; `where` names the file in the error for an unknown dtype or
// alignment.
AttentionProblem read_attention_shape(ColumnReader& columns, const std::string& where);

std::optional<ProblemId> find_problem_row(StatementCache& statements, const char* family,
                                          const std::string& key);
std::optional<ConfigId> find_config_row(StatementCache& statements, const char* family,
                                        const std::string& key);

// The problems row and its shape row, found or inserted (no validation: the caller's job).
template <class Problem>
ProblemId problem_rows(StatementCache& statements, SQLite::Database& database,
                       const Problem& problem);
// The configs row, found or inserted.
template <class Config>
ConfigId config_row(StatementCache& statements, const Config& config);

}  // namespace swr::db
