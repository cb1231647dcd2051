// ResultsDatabase: moving measurements between databases by identity (swr-tune import). Every
// measurement is a fact about one run, so an import adds the rows the target lacks and changes
// none: the newest measurement of a triple stays current by the schema's triggers, whichever
// file it came from, and nothing already there is lost.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <map>
#include <stdexcept>

#include "db/measurement_rows.hpp"
#include "db/results_database.hpp"
#include "db/sqlite_values.hpp"
#include "db/statement_cache.hpp"

namespace swr::db {
namespace {

constexpr const char* kAttentionFamily = "attention";

nlohmann::json attention_problem_json(const AttentionProblem& problem) {
  return {{"batch", problem.batch},       {"heads", problem.heads},
          {"seq_q", problem.seq_q},       {"seq_kv", problem.seq_kv},
          {"head_dim", problem.head_dim}, {"dtype", std::string(to_string(problem.dtype))},
          {"causal", problem.causal}};
}

std::string gpu_identity(const GpuRecord& gpu) {
  return gpu.name + '\n' + gpu.arch + '\n' + std::to_string(gpu.sm_count) + '\n' +
         std::to_string(gpu.l2_bytes) + '\n' + gpu.device_name;
}

// Ids of the target file, found or created inside the import's one transaction (the public
// upsert_* open transactions of their own, which SQLite cannot nest).
class IdentityWriter {
 public:
  explicit IdentityWriter(StatementCache& statements) : statements_(statements) {}

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

  ProblemId problem(const AttentionProblem& problem, SQLite::Database& database) {
    const std::string key = problem.key();
    if (auto known = problems_.find(key); known != problems_.end()) return known->second;
    if (const std::optional<std::int64_t> id = find("problems", key)) {
      return problems_.emplace(key, ProblemId{*id}).first->second;
    }
    {
      StatementLease lease =
          statements_.lease("INSERT INTO problems (family, key, json) VALUES (?, ?, ?)");
      ParameterBinder(lease.statement())
          .add(kAttentionFamily)
          .add(key)
          .add(attention_problem_json(problem).dump());
      lease.statement().exec();
    }
    const std::int64_t id = database.getLastInsertRowid();
    StatementLease lease = statements_.lease(
        "INSERT INTO attention_problems (problem_id, batch, heads, seq_q, seq_kv, head_dim,"
        " dtype, causal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
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
    return problems_.emplace(key, ProblemId{id}).first->second;
  }

  ConfigId config(const AttentionConfig& config) {
    const std::string key = config.key();
    if (auto known = configs_.find(key); known != configs_.end()) return known->second;
    {
      StatementLease lease = statements_.lease(
          "INSERT INTO configs (family, key, json) VALUES (?, ?, ?)"
          " ON CONFLICT (family, key) DO NOTHING");
      ParameterBinder(lease.statement())
          .add(kAttentionFamily)
          .add(key)
          .add(config.to_json().dump());
      lease.statement().exec();
    }
    return configs_.emplace(key, ConfigId{find("configs", key).value()}).first->second;
  }

 private:
  std::optional<std::int64_t> find(const std::string& table, const std::string& key) {
    StatementLease lease =
        statements_.lease("SELECT id FROM " + table + " WHERE family = ? AND key = ?");
    ParameterBinder(lease.statement()).add(kAttentionFamily).add(key);
    if (!lease.statement().executeStep()) return std::nullopt;
    return lease.statement().getColumn(0).getInt64();
  }

  StatementCache& statements_;
  std::map<std::string, GpuId> gpus_;
  std::map<std::string, ProblemId> problems_;
  std::map<std::string, ConfigId> configs_;
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

}  // namespace

std::vector<PortableMeasurement> ResultsDatabase::portable_measurements(
    std::size_t* other_families) const {
  if (other_families != nullptr) {
    StatementLease lease = statements_->lease(
        "SELECT COUNT(*) FROM measurements AS m JOIN problems AS p ON p.id = m.problem_id"
        " WHERE p.family <> 'attention'");
    lease.statement().executeStep();
    *other_families = static_cast<std::size_t>(lease.statement().getColumn(0).getInt64());
  }
  StatementLease lease = statements_->lease(
      std::string("SELECT ") + kMeasurementRowColumns +
      ", g.name, g.arch, g.sm_count, g.l2_bytes, g.device_name, g.driver_version,"
      " g.cuda_version, a.batch, a.heads, a.seq_q, a.seq_kv, a.head_dim, a.dtype, a.causal"
      " FROM measurements AS m JOIN configs AS c ON c.id = m.config_id"
      " JOIN gpus AS g ON g.id = m.gpu_id"
      " JOIN attention_problems AS a ON a.problem_id = m.problem_id ORDER BY m.id");
  SQLite::Statement& query = lease.statement();
  const int first = query.getColumnCount() - 14;  // the GPU and shape columns follow the row's
  std::vector<PortableMeasurement> measurements;
  while (query.executeStep()) {
    PortableMeasurement portable;
    StoredMeasurement stored = read_measurement_row(query);
    portable.record = std::move(stored.record);
    portable.config = AttentionConfig::from_json(stored.config_json);
    int column = first;
    auto text = [&] { return query.getColumn(column++).getString(); };
    auto integer = [&] { return query.getColumn(column++).getInt64(); };
    portable.gpu.name = text();
    portable.gpu.arch = text();
    portable.gpu.sm_count = static_cast<int>(integer());
    portable.gpu.l2_bytes = integer();
    portable.gpu.device_name = text();
    portable.gpu.driver_version = text();
    portable.gpu.cuda_version = text();
    AttentionProblem& problem = portable.problem;
    problem.batch = static_cast<int>(integer());
    problem.heads = static_cast<int>(integer());
    problem.seq_q = static_cast<int>(integer());
    problem.seq_kv = static_cast<int>(integer());
    problem.head_dim = static_cast<int>(integer());
    const std::string dtype = text();
    const std::optional<DataType> type = parse_data_type(dtype);
    if (!type) {
      throw std::runtime_error("a problem in " + path_.string() + " has an unknown dtype '" +
                               dtype + "'");
    }
    problem.dtype = *type;
    problem.causal = integer() != 0;
    measurements.push_back(std::move(portable));
  }
  return measurements;
}

ImportCounts ResultsDatabase::import_measurements(
    const std::vector<PortableMeasurement>& measurements) {
  require_writable("import_measurements");
  for (const PortableMeasurement& measurement : measurements) {
    measurement.problem.validate();
    if (measurement.record.measured_at.empty()) {
      throw std::invalid_argument("an imported measurement needs its measured_at time");
    }
  }
  // All or nothing: a failure part way leaves the file as it was.
  SQLite::Transaction transaction(*database_, SQLite::TransactionBehavior::IMMEDIATE);
  IdentityWriter identities(*statements_);
  ImportCounts counts;
  for (const PortableMeasurement& measurement : measurements) {
    MeasurementRecord record = measurement.record;
    record.gpu = identities.gpu(measurement.gpu);
    record.problem = identities.problem(measurement.problem, *database_);
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
