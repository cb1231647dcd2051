#include "db/problem_rows.hpp"

#include <SQLiteCpp/Statement.h>

#include <stdexcept>

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
      " head_dim, dtype, causal, kv_heads, causal_align) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  ParameterBinder(lease.statement())
      .add(id)
      .add(problem.batch)
      .add(problem.heads)
      .add(problem.seq_q)
      .add(problem.seq_kv)
      .add(problem.head_dim)
      .add(std::string(to_string(problem.dtype)))
      .add(problem.causal)
      .add(problem.kv_head_count())
      .add(std::string(to_string(problem.effective_causal_align())));
  lease.statement().exec();
}

// The backward's shape is the forward's: the same table, told apart by problems.family.
void insert_shape_row(StatementCache& statements, std::int64_t id,
                      const AttentionBackwardProblem& problem) {
  insert_shape_row(statements, id, problem.shape);
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

// The first version with attention_problems.kv_heads and causal_align.
constexpr int kGqaColumnsVersion = 4;

}  // namespace

std::string attention_shape_columns(const std::string& alias, int schema_version) {
  const std::string a = alias + ".";
  std::string columns = a + "batch, " + a + "heads, " + a + "seq_q, " + a + "seq_kv, " + a +
                        "head_dim, " + a + "dtype, " + a + "causal, ";
  if (schema_version >= kGqaColumnsVersion) {
    columns += a + "kv_heads, " + a + "causal_align";
  } else {
    columns += a + "heads, 'top_left'";
  }
  return columns;
}

AttentionProblem read_attention_shape(ColumnReader& columns, const std::string& where) {
  AttentionProblem problem;
  problem.batch = columns.integer();
  problem.heads = columns.integer();
  problem.seq_q = columns.integer();
  problem.seq_kv = columns.integer();
  problem.head_dim = columns.integer();
  const std::string dtype = columns.text();
  const std::optional<DataType> type = parse_data_type(dtype);
  if (!type) throw std::runtime_error(where + " has an unknown dtype '" + dtype + "'");
  problem.dtype = *type;
  problem.causal = columns.boolean();
  problem.kv_heads = columns.integer();
  const std::string align = columns.text();
  const std::optional<CausalAlignment> alignment = parse_causal_alignment(align);
  if (!alignment)
    throw std::runtime_error(where + " has an unknown causal alignment '" + align + "'");
  problem.causal_align = *alignment;
  return problem;
}

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
template ProblemId problem_rows(StatementCache&, SQLite::Database&,
                                const AttentionBackwardProblem&);
template ConfigId config_row(StatementCache&, const AttentionBackwardConfig&);
template ConfigId config_row(StatementCache&, const AttentionConfig&);
template ConfigId config_row(StatementCache&, const GemmConfig&);

}  // namespace swr::db
