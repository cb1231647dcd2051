// ResultsDatabase: the shapes the runtime and export walk (tuned attention and GEMM shapes of a
// GPU).
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <stdexcept>

#include "db/measurement_rows.hpp"
#include "db/problem_rows.hpp"
#include "db/results_database.hpp"
#include "db/sqlite_access.hpp"

namespace swr::db {
namespace {

// An attention_problems row: its problem id, then its shape (attention_shape_columns).
std::string shape_columns(int schema_version) {
  return "a.problem_id, " + attention_shape_columns("a", schema_version);
}

TunedShape read_shape(SQLite::Statement& query, const std::filesystem::path& path) {
  ColumnReader columns(query);
  TunedShape shape;
  shape.id = ProblemId{columns.int64()};
  shape.problem = read_attention_shape(
      columns, "problem " + std::to_string(raw(shape.id)) + " in " + path.string());
  return shape;
}

// A gemm_problems row, as selected by kGemmShapeColumns.
constexpr const char* kGemmShapeColumns = "g.problem_id, g.m, g.n, g.k, g.dtype";

TunedGemmShape read_gemm_shape(SQLite::Statement& query, const std::filesystem::path& path) {
  ColumnReader columns(query);
  TunedGemmShape shape;
  shape.id = ProblemId{columns.int64()};
  shape.problem.m = columns.integer();
  shape.problem.n = columns.integer();
  shape.problem.k = columns.integer();
  const std::string dtype = columns.text();
  const std::optional<DataType> type = parse_data_type(dtype);
  if (!type) {
    throw std::runtime_error("problem " + std::to_string(raw(shape.id)) + " in " + path.string() +
                             " has an unknown dtype '" + dtype + "'");
  }
  shape.problem.dtype = *type;
  return shape;
}

// Only shapes with a valid current variant count: a shape where everything failed has no answer.
// `alias` names the family's shape table in the query.
std::string has_valid_variant(const char* alias) {
  return std::string(" EXISTS (SELECT 1 FROM current_measurements AS cur WHERE cur.gpu_id = ?1") +
         " AND cur.problem_id = " + alias + ".problem_id AND cur.valid = 1)";
}

}  // namespace

std::vector<std::string> ResultsDatabase::gpu_names() const {
  StatementLease lease = statements_->lease("SELECT DISTINCT name FROM gpus ORDER BY name");
  std::vector<std::string> names;
  while (lease.statement().executeStep())
    names.push_back(lease.statement().getColumn(0).getString());
  return names;
}

namespace {

// Attention shape rows of one pass's problems (`family`, bound as ?5): both passes share the
// shape table.
std::string of_family(const char* alias) {
  return std::string(" AND EXISTS (SELECT 1 FROM problems AS p WHERE p.id = ") + alias +
         ".problem_id AND p.family = ?5)";
}

std::vector<TunedShape> tuned_shapes(StatementCache& statements, int schema_version,
                                     const std::filesystem::path& path, GpuId gpu,
                                     const char* family, const AttentionProblem* like) {
  // attention_problems_by_shape leads with (head_dim, dtype, causal): one index range.
  const std::string like_columns =
      like != nullptr ? " a.head_dim = ?2 AND a.dtype = ?3 AND a.causal = ?4 AND" : "";
  StatementLease lease = statements.lease(
      "SELECT " + shape_columns(schema_version) + " FROM attention_problems AS a WHERE" +
      like_columns + has_valid_variant("a") + of_family("a") + " ORDER BY a.problem_id");
  SQLite::Statement& query = lease.statement();
  query.bind(1, raw(gpu));
  if (like != nullptr) {
    query.bind(2, like->head_dim);
    query.bind(3, std::string(to_string(like->dtype)));
    query.bind(4, like->causal ? 1 : 0);
  }
  query.bind(5, family);
  std::vector<TunedShape> shapes;
  while (query.executeStep()) shapes.push_back(read_shape(query, path));
  return shapes;
}

}  // namespace

std::vector<TunedShape> ResultsDatabase::tuned_attention_shapes(GpuId gpu) const {
  return tuned_shapes(*statements_, schema_version_, path_, gpu, kAttentionFamily, nullptr);
}

std::vector<TunedShape> ResultsDatabase::tuned_attention_shapes_like(
    GpuId gpu, const AttentionProblem& like) const {
  return tuned_shapes(*statements_, schema_version_, path_, gpu, kAttentionFamily, &like);
}

std::vector<TunedShape> ResultsDatabase::tuned_attention_backward_shapes(GpuId gpu) const {
  return tuned_shapes(*statements_, schema_version_, path_, gpu, kAttentionBackwardFamily, nullptr);
}

std::vector<TunedShape> ResultsDatabase::tuned_attention_backward_shapes_like(
    GpuId gpu, const AttentionProblem& like) const {
  return tuned_shapes(*statements_, schema_version_, path_, gpu, kAttentionBackwardFamily, &like);
}

std::vector<TunedGemmShape> ResultsDatabase::tuned_gemm_shapes(GpuId gpu) const {
  StatementLease lease = statements_->lease(std::string("SELECT ") + kGemmShapeColumns +
                                            " FROM gemm_problems AS g WHERE" +
                                            has_valid_variant("g") + " ORDER BY g.problem_id");
  SQLite::Statement& query = lease.statement();
  query.bind(1, raw(gpu));
  std::vector<TunedGemmShape> shapes;
  while (query.executeStep()) shapes.push_back(read_gemm_shape(query, path_));
  return shapes;
}

std::vector<TunedGemmShape> ResultsDatabase::tuned_gemm_shapes_like(GpuId gpu,
                                                                    DataType dtype) const {
  // gemm_problems_by_shape leads with the dtype: one index range.
  StatementLease lease = statements_->lease(std::string("SELECT ") + kGemmShapeColumns +
                                            " FROM gemm_problems AS g WHERE g.dtype = ?2 AND" +
                                            has_valid_variant("g") + " ORDER BY g.problem_id");
  SQLite::Statement& query = lease.statement();
  query.bind(1, raw(gpu));
  query.bind(2, std::string(to_string(dtype)));
  std::vector<TunedGemmShape> shapes;
  while (query.executeStep()) shapes.push_back(read_gemm_shape(query, path_));
  return shapes;
}

}  // namespace swr::db
