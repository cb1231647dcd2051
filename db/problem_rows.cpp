#include "db/problem_rows.hpp"

#include <SQLiteCpp/Statement.h>

#include "db/sqlite_access.hpp"

namespace swr::db {
namespace {

std::optional<std::int64_t> find_id(StatementCache& statements, const char* sql, const char* family,
                                    const std::string& key) {
  StatementLease lease = statements.lease(sql);
  ParameterBinder(lease.statement()).add(family).add(key);
  if (!lease.statement().executeStep()) return std::nullopt;
  return lease.statement().getColumn(0).getInt64();
}

void insert_shape_row(StatementCache& statements, std::int64_t id,
                      const AttentionProblem& problem) {
  StatementLease lease = statements.lease(
      "INSERT INTO attention_problems (problem_id, batch, heads, seq_q, seq_kv,"
      " head_dim, dtype, causal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  ParameterBinder(lease.statement())
      .add(id)
      .add(problem.batch)
      .add(problem.heads)
      .add(problem.seq_q)
      .add(problem.seq_kv)
      .add(problem.head_dim)
      .add(std::string(to_string(problem.dtype)))
      .add(problem.causal);
  lease.statement().exec();
}

void insert_shape_row(StatementCache& statements, std::int64_t id, const GemmProblem& problem) {
  StatementLease lease = statements.lease(
      "INSERT INTO gemm_problems (problem_id, m, n, k, dtype) VALUES (?, ?, ?, ?, ?)");
  ParameterBinder(lease.statement())
      .add(id)
      .add(problem.m)
      .add(problem.n)
      .add(problem.k)
      .add(std::string(to_string(problem.dtype)));
  lease.statement().exec();
}

}  // namespace

std::optional<ProblemId> find_problem_row(StatementCache& statements, const char* family,
                                          const std::string& key) {
  const auto id =
      find_id(statements, "SELECT id FROM problems WHERE family = ? AND key = ?", family, key);
  if (!id) return std::nullopt;
  return ProblemId{*id};
}

std::optional<ConfigId> find_config_row(StatementCache& statements, const char* family,
                                        const std::string& key) {
  const auto id =
      find_id(statements, "SELECT id FROM configs WHERE family = ? AND key = ?", family, key);
  if (!id) return std::nullopt;
  return ConfigId{*id};
}

template <class Problem>
ProblemId problem_rows(StatementCache& statements, SQLite::Database& database,
                       const Problem& problem) {
  const std::string key = problem.key();
  if (const auto existing = find_problem_row(statements, family_of(problem), key)) {
    return *existing;
  }
  {
    StatementLease lease =
        statements.lease("INSERT INTO problems (family, key, json) VALUES (?, ?, ?)");
    ParameterBinder(lease.statement())
        .add(family_of(problem))
        .add(key)
        .add(problem.to_json().dump());
    lease.statement().exec();
  }
  const std::int64_t id = database.getLastInsertRowid();
  insert_shape_row(statements, id, problem);
  return ProblemId{id};
}

template <class Config>
ConfigId config_row(StatementCache& statements, const Config& config) {
  const std::string key = config.key();
  {
    StatementLease lease = statements.lease(
        "INSERT INTO configs (family, key, json) VALUES (?, ?, ?)"
        " ON CONFLICT (family, key) DO NOTHING");
    ParameterBinder(lease.statement()).add(family_of(config)).add(key).add(config.to_json().dump());
    lease.statement().exec();
  }
  return find_config_row(statements, family_of(config), key).value();
}

template ProblemId problem_rows(StatementCache&, SQLite::Database&, const AttentionProblem&);
template ProblemId problem_rows(StatementCache&, SQLite::Database&, const GemmProblem&);
template ConfigId config_row(StatementCache&, const AttentionConfig&);
template ConfigId config_row(StatementCache&, const GemmConfig&);

}  // namespace swr::db
