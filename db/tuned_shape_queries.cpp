// ResultsDatabase: the questions the runtime asks (tuned attention and GEMM shapes of a GPU, the
// best measurement of a shape when several machines measured the same variant).
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <stdexcept>

#include "db/measurement_rows.hpp"
#include "db/results_database.hpp"
#include "db/sqlite_values.hpp"
#include "db/statement_cache.hpp"

namespace swr::db {
namespace {

DataType read_dtype(const std::string& dtype, ProblemId id, const std::filesystem::path& path) {
  const std::optional<DataType> type = parse_data_type(dtype);
  if (!type) {
    throw std::runtime_error("problem " + std::to_string(raw(id)) + " in " + path.string() +
                             " has an unknown dtype '" + dtype + "'");
  }
  return *type;
}

// An attention_problems row, as selected by kShapeColumns.
constexpr const char* kShapeColumns =
    "a.problem_id, a.batch, a.heads, a.seq_q, a.seq_kv, a.head_dim, a.dtype, a.causal";

TunedShape read_shape(SQLite::Statement& query, const std::filesystem::path& path) {
  ColumnReader columns(query);
  TunedShape shape;
  shape.id = ProblemId{columns.int64()};
  AttentionProblem& problem = shape.problem;
  problem.batch = columns.integer();
  problem.heads = columns.integer();
  problem.seq_q = columns.integer();
  problem.seq_kv = columns.integer();
  problem.head_dim = columns.integer();
  problem.dtype = read_dtype(columns.text(), shape.id, path);
  problem.causal = columns.boolean();
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
  shape.problem.dtype = read_dtype(columns.text(), shape.id, path);
  return shape;
}

// Only shapes with a valid current variant count: a shape where everything failed has no answer.
// `alias` names the family's shape table in the query.
std::string has_valid_variant(const char* alias) {
  return std::string(" EXISTS (SELECT 1 FROM current_measurements AS cur WHERE cur.gpu_id = ?1") +
         " AND cur.problem_id = " + alias + ".problem_id AND cur.valid = 1)";
}

std::string key_of_config(StatementCache& statements, std::int64_t config) {
  StatementLease lease = statements.lease("SELECT key FROM configs WHERE id = ?");
  lease.statement().bind(1, config);
  lease.statement().executeStep();
  return lease.statement().getColumn(0).getString();
}

}  // namespace

std::vector<std::string> ResultsDatabase::gpu_names() const {
  StatementLease lease = statements_->lease("SELECT DISTINCT name FROM gpus ORDER BY name");
  std::vector<std::string> names;
  while (lease.statement().executeStep())
    names.push_back(lease.statement().getColumn(0).getString());
  return names;
}

std::vector<TunedShape> ResultsDatabase::tuned_attention_shapes(GpuId gpu) const {
  StatementLease lease = statements_->lease(std::string("SELECT ") + kShapeColumns +
                                            " FROM attention_problems AS a WHERE" +
                                            has_valid_variant("a") + " ORDER BY a.problem_id");
  SQLite::Statement& query = lease.statement();
  query.bind(1, raw(gpu));
  std::vector<TunedShape> shapes;
  while (query.executeStep()) shapes.push_back(read_shape(query, path_));
  return shapes;
}

std::vector<TunedShape> ResultsDatabase::tuned_attention_shapes_like(
    GpuId gpu, const AttentionProblem& like) const {
  // attention_problems_by_shape leads with (head_dim, dtype, causal): one index range.
  StatementLease lease = statements_->lease(
      std::string("SELECT ") + kShapeColumns +
      " FROM attention_problems AS a WHERE a.head_dim = ?2 AND a.dtype = ?3 AND a.causal = ?4"
      " AND" +
      has_valid_variant("a") + " ORDER BY a.problem_id");
  SQLite::Statement& query = lease.statement();
  query.bind(1, raw(gpu));
  query.bind(2, like.head_dim);
  query.bind(3, std::string(to_string(like.dtype)));
  query.bind(4, like.causal ? 1 : 0);
  std::vector<TunedShape> shapes;
  while (query.executeStep()) shapes.push_back(read_shape(query, path_));
  return shapes;
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

std::optional<StoredMeasurement> ResultsDatabase::best_of_current_builds(GpuId gpu,
                                                                         ProblemId problem) const {
  // Per config, its newest measurement says whether it is valid and which build (source hash)
  // counts; its time is the fastest valid measurement of that build. Equal times go to the
  // smaller config key, as in best_for. Most configs were measured once, and their time is the
  // current one: the speed index gives the fastest of those in one seek, and only the configs
  // measured more than once need a look at their history.
  std::int64_t best_id = 0;
  double best_ms = 0;
  std::int64_t best_config = 0;
  std::string best_key;  // of best_config; empty until a tie needs it
  {
    StatementLease lease = statements_->lease(
        "SELECT measurement_id, median_ms, config_key, config_id FROM current_measurements"
        " WHERE gpu_id = ? AND problem_id = ? AND valid = 1 ORDER BY median_ms, config_key"
        " LIMIT 1");
    SQLite::Statement& query = lease.statement();
    ParameterBinder(query).add(raw(gpu)).add(raw(problem));
    if (!query.executeStep()) return std::nullopt;
    best_id = query.getColumn(0).getInt64();
    best_ms = query.getColumn(1).getDouble();
    best_key = query.getColumn(2).getString();
    best_config = query.getColumn(3).getInt64();
  }
  bool any_repeated = false;  // a config measured more than once
  {
    // Index only (measurements_by_triple), in config order: repeats are neighbours.
    StatementLease lease = statements_->lease(
        "SELECT config_id FROM measurements WHERE gpu_id = ? AND problem_id = ?"
        " ORDER BY config_id");
    ParameterBinder(lease.statement()).add(raw(gpu)).add(raw(problem));
    std::int64_t previous = -1;
    while (!any_repeated && lease.statement().executeStep()) {
      const std::int64_t config = lease.statement().getColumn(0).getInt64();
      any_repeated = config == previous;
      previous = config;
    }
  }
  if (any_repeated) {
    // The older runs of the repeated configs; a config's rows come newest first, and the newest
    // names the build that counts (its own time is among the current ones looked at above).
    StatementLease lease = statements_->lease(
        "SELECT id, median_ms, config_id, status = 'ok', source_hash FROM measurements"
        " WHERE gpu_id = ? AND problem_id = ? ORDER BY config_id, measured_at DESC, id DESC");
    SQLite::Statement& query = lease.statement();
    ParameterBinder(query).add(raw(gpu)).add(raw(problem));
    std::int64_t config = -1;
    std::string build;
    bool newest_valid = false;
    while (query.executeStep()) {
      const std::int64_t row_config = query.getColumn(2).getInt64();
      const bool valid = query.getColumn(3).getInt() != 0;
      if (row_config != config) {
        config = row_config;
        build = query.getColumn(4).getString();
        newest_valid = valid;
        continue;
      }
      if (!newest_valid || !valid || query.getColumn(4).getString() != build) {
        continue;  // a failed config, a failed run, or another build
      }
      const double median_ms = query.getColumn(1).getDouble();
      if (median_ms > best_ms) continue;
      if (median_ms == best_ms) {  // a tie: the keys decide, read only now (ties are rare)
        if (best_key.empty()) best_key = key_of_config(*statements_, best_config);
        if (key_of_config(*statements_, config) >= best_key) continue;
      }
      best_id = query.getColumn(0).getInt64();
      best_ms = median_ms;
      best_config = config;
      best_key.clear();
    }
  }
  StatementLease lease = statements_->lease(std::string("SELECT ") + kMeasurementRowColumns +
                                            " FROM measurements AS m"
                                            " JOIN configs AS c ON c.id = m.config_id"
                                            " WHERE m.id = ?");
  lease.statement().bind(1, best_id);
  lease.statement().executeStep();
  return read_measurement_row(lease.statement());
}

}  // namespace swr::db
