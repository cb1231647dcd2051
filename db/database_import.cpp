// ResultsDatabase: moving measurements between databases by identity (swr-tune import), of both
// families. Every measurement is a fact about one run, so an import adds the rows the target
// lacks and changes none: the newest measurement of a triple stays current by the schema's
// triggers, whichever file it came from, and nothing already there is lost.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <map>
#include <stdexcept>
#include <variant>

#include "db/measurement_rows.hpp"
#include "db/problem_rows.hpp"
#include "db/results_database.hpp"
#include "db/sqlite_access.hpp"

namespace swr::db {
namespace {

std::string gpu_identity(const GpuRecord& gpu) {
  return gpu.name + '\n' + gpu.arch + '\n' + std::to_string(gpu.sm_count) + '\n' +
         std::to_string(gpu.l2_bytes) + '\n' + gpu.device_name;
}

// Ids of the target file, found or created inside the import's one transaction (the public
// upsert_* open transactions of their own, which SQLite cannot nest).
class IdentityWriter {
 public:
  IdentityWriter(StatementCache& statements, SQLite::Database& database)
      : statements_(statements), database_(database) {}

  GpuId gpu(const GpuRecord& gpu) {
    const std::string identity = gpu_identity(gpu);
    if (auto known = gpus_.find(identity); known != gpus_.end()) return known->second;
    {
      // A GPU already there keeps the versions it was seen with last.
      StatementLease lease = statements_.lease(
          "INSERT INTO gpus (name, arch, sm_count, l2_bytes, device_name, driver_version,"
          " cuda_version) VALUES (?, ?, ?, ?, ?, ?, ?)"
          " ON CONFLICT (name, arch, sm_count, l2_bytes, device_name) DO NOTHING");
      ParameterBinder(lease.statement())
          .add(gpu.name)
          .add(gpu.arch)
          .add(gpu.sm_count)
          .add(gpu.l2_bytes)
          .add(gpu.device_name)
          .add(gpu.driver_version)
          .add(gpu.cuda_version);
      lease.statement().exec();
    }
    StatementLease lease = statements_.lease(
        "SELECT id FROM gpus WHERE name = ? AND arch = ? AND sm_count = ? AND l2_bytes = ?"
        " AND device_name = ?");
    ParameterBinder(lease.statement())
        .add(gpu.name)
        .add(gpu.arch)
        .add(gpu.sm_count)
        .add(gpu.l2_bytes)
        .add(gpu.device_name);
    lease.statement().executeStep();
    const GpuId id{lease.statement().getColumn(0).getInt64()};
    gpus_.emplace(identity, id);
    return id;
  }

  ProblemId problem(const decltype(PortableMeasurement::problem)& problem) {
    return std::visit(
        [this](const auto& shape) {
          const std::string key = std::string(family_of(shape)) + '\n' + shape.key();
          if (auto known = problems_.find(key); known != problems_.end()) return known->second;
          return problems_.emplace(key, problem_rows(statements_, database_, shape)).first->second;
        },
        problem);
  }

  ConfigId config(const decltype(PortableMeasurement::config)& config) {
    return std::visit(
        [this](const auto& variant) {
          const std::string key = std::string(family_of(variant)) + '\n' + variant.key();
          if (auto known = configs_.find(key); known != configs_.end()) return known->second;
          return configs_.emplace(key, config_row(statements_, variant)).first->second;
        },
        config);
  }

 private:
  StatementCache& statements_;
  SQLite::Database& database_;
  std::map<std::string, GpuId> gpus_;
  std::map<std::string, ProblemId> problems_;  // by family and key
  std::map<std::string, ConfigId> configs_;    // by family and key
};

// The same run is the same triple, time, build, outcome and median: importing a file twice, or
// an export made from this very database, adds nothing.
bool already_present(StatementCache& statements, const MeasurementRecord& record) {
  StatementLease lease = statements.lease(
      "SELECT 1 FROM measurements WHERE gpu_id = ? AND problem_id = ? AND config_id = ?"
      " AND measured_at = ? AND source_hash = ? AND status = ? AND median_ms IS ? LIMIT 1");
  ParameterBinder(lease.statement())
      .add(raw(record.gpu))
      .add(raw(record.problem))
      .add(raw(record.config))
      .add(record.measured_at)
      .add(record.source_hash)
      .add(std::string(to_string(record.status)))
      .add(record.median_ms);
  return lease.statement().executeStep();
}

DataType dtype_named(const std::string& dtype, const std::filesystem::path& path) {
  const std::optional<DataType> type = parse_data_type(dtype);
  if (!type) {
    throw std::runtime_error("a problem in " + path.string() + " has an unknown dtype '" + dtype +
                             "'");
  }
  return *type;
}

// The GPU, then the problem's family, the attention shape columns, then the GEMM ones, after the
// measurement row's: one of the two shapes is NULL.
std::string portable_columns(int schema_version) {
  return ", g.name, g.arch, g.sm_count, g.l2_bytes, g.device_name, g.driver_version, "
         "g.cuda_version, p.family, a.problem_id, " +
         attention_shape_columns("a", schema_version) +
         ", gp.problem_id, gp.m, gp.n, gp.k, gp.dtype";
}
constexpr int kAttentionShapeColumnCount = 1 + 9;  // problem id + attention_shape_columns
constexpr int kPortableColumnCount = 8 + kAttentionShapeColumnCount + 5;

// Measurements whose problem has a shape row of a family this build reads (an attention shape
// row belongs to either attention pass).
constexpr const char* kPortableJoins =
    " FROM measurements AS m JOIN configs AS c ON c.id = m.config_id"
    " JOIN gpus AS g ON g.id = m.gpu_id JOIN problems AS p ON p.id = m.problem_id"
    " LEFT JOIN attention_problems AS a ON a.problem_id = m.problem_id"
    "   AND p.family IN ('attention', 'attention-backward')"
    " LEFT JOIN gemm_problems AS gp ON gp.problem_id = m.problem_id";

}  // namespace

const char* family_of(const PortableMeasurement& measurement) {
  return std::visit([](const auto& shape) { return db::family_of(shape); }, measurement.problem);
}

std::string problem_key(const PortableMeasurement& measurement) {
  return std::visit([](const auto& shape) { return shape.key(); }, measurement.problem);
}

std::vector<PortableMeasurement> ResultsDatabase::portable_measurements(
    std::size_t* other_families) const {
  if (other_families != nullptr) {
    StatementLease lease =
        statements_->lease(std::string("SELECT COUNT(*)") + kPortableJoins +
                           " WHERE a.problem_id IS NULL AND gp.problem_id IS NULL");
    lease.statement().executeStep();
    *other_families = static_cast<std::size_t>(lease.statement().getColumn(0).getInt64());
  }
  StatementLease lease = statements_->lease(
      "SELECT " + measurement_row_columns(schema_version_) + portable_columns(schema_version_) +
      kPortableJoins +
      " WHERE a.problem_id IS NOT NULL OR gp.problem_id IS NOT NULL ORDER BY m.id");
  SQLite::Statement& query = lease.statement();
  // Where the GPU, the attention shape and the GEMM shape columns start.
  const int gpu_columns = query.getColumnCount() - kPortableColumnCount;
  const int attention_columns = gpu_columns + 8;
  const int gemm_columns = attention_columns + kAttentionShapeColumnCount;
  std::vector<PortableMeasurement> measurements;
  while (query.executeStep()) {
    PortableMeasurement portable;
    StoredMeasurement stored = read_measurement_row(query);
    portable.record = std::move(stored.record);
    int column = gpu_columns;
    auto text = [&] { return query.getColumn(column++).getString(); };
    auto integer = [&] { return query.getColumn(column++).getInt64(); };
    portable.gpu.name = text();
    portable.gpu.arch = text();
    portable.gpu.sm_count = static_cast<int>(integer());
    portable.gpu.l2_bytes = integer();
    portable.gpu.device_name = text();
    portable.gpu.driver_version = text();
    portable.gpu.cuda_version = text();
    const std::string family = text();
    if (!query.getColumn(attention_columns).isNull()) {
      ColumnReader shape(query, attention_columns + 1);  // past the problem id
      const AttentionProblem problem =
          read_attention_shape(shape, "a problem in " + path_.string());
      if (family == kAttentionBackwardFamily) {
        portable.problem = AttentionBackwardProblem{problem};
        portable.config = AttentionBackwardConfig::from_json(stored.config_json);
      } else {
        portable.problem = problem;
        portable.config = AttentionConfig::from_json(stored.config_json);
      }
    } else {
      column = gemm_columns + 1;
      GemmProblem problem;
      problem.m = static_cast<int>(integer());
      problem.n = static_cast<int>(integer());
      problem.k = static_cast<int>(integer());
      problem.dtype = dtype_named(text(), path_);
      portable.problem = problem;
      portable.config = GemmConfig::from_json(stored.config_json);
    }
    measurements.push_back(std::move(portable));
  }
  return measurements;
}

ImportCounts ResultsDatabase::import_measurements(
    const std::vector<PortableMeasurement>& measurements) {
  require_writable("import_measurements");
  for (const PortableMeasurement& measurement : measurements) {
    std::visit([](const auto& shape) { shape.validate(); }, measurement.problem);
    if (measurement.problem.index() != measurement.config.index()) {
      throw std::invalid_argument(
          "an imported measurement pairs a problem and a config of "
          "different families (" +
          problem_key(measurement) + ")");
    }
    if (measurement.record.measured_at.empty()) {
      throw std::invalid_argument("an imported measurement needs its measured_at time");
    }
  }
  // All or nothing: a failure part way leaves the file as it was.
  SQLite::Transaction transaction(*database_, SQLite::TransactionBehavior::IMMEDIATE);
  IdentityWriter identities(*statements_, *database_);
  ImportCounts counts;
  for (const PortableMeasurement& measurement : measurements) {
    MeasurementRecord record = measurement.record;
    record.gpu = identities.gpu(measurement.gpu);
    record.problem = identities.problem(measurement.problem);
    record.config = identities.config(measurement.config);
    if (already_present(*statements_, record)) {
      ++counts.already_present;
      continue;
    }
    insert_measurement_row(*statements_, record);
    ++counts.added;
  }
  transaction.commit();
  return counts;
}

}  // namespace swr::db
