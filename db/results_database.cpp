#include "db/results_database.hpp"

#include <sqlite3.h>

#include <chrono>
#include <thread>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <stdexcept>

#include "db/database_file.hpp"
#include "db/database_location.hpp"
#include "db/problem_rows.hpp"
#include "db/schema_migrations.hpp"
#include "db/sqlite_access.hpp"

namespace swr::db {
namespace {

// Switching a new file to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at once,
// without the busy handler, when another process is creating the same file: retry for as long
// as the busy timeout.
void switch_to_wal(SQLite::Database& database) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(ResultsDatabase::kBusyTimeoutMs);
  for (;;) {
    try {
      database.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (const SQLite::Exception& error) {
      const int code = error.getErrorCode() & 0xff;
      if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
          std::chrono::steady_clock::now() > deadline)
        throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

std::unique_ptr<SQLite::Database> open_for_writing(const std::filesystem::path& path) {
  // Refuses foreign, damaged and newer files before SQLite may write a byte into them.
  check_database_writable(path);
  auto database = std::make_unique<SQLite::Database>(
      path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, ResultsDatabase::kBusyTimeoutMs);
  // Two tuners on one host share the file: readers never block the writer in WAL mode.
  switch_to_wal(*database);
  // In WAL mode NORMAL keeps every commit through a crash of the process (a killed tuner loses
  // nothing); only a power cut may lose the last commits. FULL would fsync every variant.
  database->exec("PRAGMA synchronous = NORMAL");
  database->exec("PRAGMA foreign_keys = ON");
  apply_migrations(*database, schema_migrations());
  return database;
}

std::unique_ptr<SQLite::Database> open_for_reading(const std::filesystem::path& path) {
  if (inspect_database_file(path) != DatabaseFileState::sqlite) throw no_database(path);
  auto database = open_database_for_reading(path, ResultsDatabase::kBusyTimeoutMs);
  const int latest = latest_schema_version();
  const int version = require_known_schema(*database, path, latest);
  if (version == 0) throw no_database(path);
  const int oldest = oldest_readable_schema_version();
  if (version < oldest) throw schema_too_old_to_read(path, version, oldest, latest);
  return database;
}

constexpr const char* kGpuColumns =
    "id, name, arch, sm_count, l2_bytes, device_name, driver_version, cuda_version";

StoredGpu read_gpu(SQLite::Statement& query) {
  ColumnReader columns(query);
  StoredGpu stored;
  stored.id = GpuId{columns.int64()};
  stored.gpu.name = columns.text();
  stored.gpu.arch = columns.text();
  stored.gpu.sm_count = columns.integer();
  stored.gpu.l2_bytes = columns.int64();
  stored.gpu.device_name = columns.text();
  stored.gpu.driver_version = columns.text();
  stored.gpu.cuda_version = columns.text();
  return stored;
}

// Runs `write` in one IMMEDIATE transaction and commits what it wrote (rolled back if it throws).
template <class Write>
auto committed(SQLite::Database& database, Write&& write) {
  SQLite::Transaction transaction(database, SQLite::TransactionBehavior::IMMEDIATE);
  auto result = write();
  transaction.commit();
  return result;
}

}  // namespace

ResultsDatabase::ResultsDatabase(const std::filesystem::path& path, OpenMode mode)
    : path_(path),
      mode_(mode),
      database_(mode == OpenMode::read_write ? open_for_writing(path) : open_for_reading(path)),
      statements_(std::make_unique<StatementCache>(*database_)),
      schema_version_(read_schema_version(*database_)) {}

ResultsDatabase::~ResultsDatabase() = default;
ResultsDatabase::ResultsDatabase(ResultsDatabase&&) noexcept = default;
ResultsDatabase& ResultsDatabase::operator=(ResultsDatabase&& other) noexcept {
  if (this != &other) {
    statements_.reset();  // finalized before their connection closes, or the close fails
    database_ = std::move(other.database_);
    statements_ = std::move(other.statements_);
    path_ = std::move(other.path_);
    mode_ = other.mode_;
    schema_version_ = other.schema_version_;
  }
  return *this;
}

int ResultsDatabase::schema_version() const {
  return read_schema_version(*database_);
}

void ResultsDatabase::require_writable(const char* operation) const {
  if (mode_ == OpenMode::read_only) {
    throw std::logic_error(std::string(operation) + ": " + path_.string() +
                           " was opened read-only");
  }
}

GpuId ResultsDatabase::upsert_gpu(const GpuRecord& gpu) {
  require_writable("upsert_gpu");
  SQLite::Transaction transaction(*database_, SQLite::TransactionBehavior::IMMEDIATE);
  StatementLease insert_lease = statements_->lease(
      "INSERT INTO gpus (name, arch, sm_count, l2_bytes, device_name,"
      " driver_version, cuda_version) VALUES (?, ?, ?, ?, ?, ?, ?)"
      " ON CONFLICT (name, arch, sm_count, l2_bytes, device_name) DO UPDATE"
      " SET driver_version = excluded.driver_version,"
      " cuda_version = excluded.cuda_version");
  SQLite::Statement& insert = insert_lease.statement();
  ParameterBinder(insert)
      .add(gpu.name)
      .add(gpu.arch)
      .add(gpu.sm_count)
      .add(gpu.l2_bytes)
      .add(gpu.device_name)
      .add(gpu.driver_version)
      .add(gpu.cuda_version);
  insert.exec();
  const std::optional<GpuId> id = find_gpu(gpu);
  transaction.commit();
  return id.value();
}

std::optional<GpuId> ResultsDatabase::find_gpu(const GpuRecord& gpu) const {
  StatementLease query_lease = statements_->lease(
      "SELECT id FROM gpus WHERE name = ? AND arch = ? AND sm_count = ?"
      " AND l2_bytes = ? AND device_name = ?");
  SQLite::Statement& query = query_lease.statement();
  ParameterBinder(query)
      .add(gpu.name)
      .add(gpu.arch)
      .add(gpu.sm_count)
      .add(gpu.l2_bytes)
      .add(gpu.device_name);
  if (!query.executeStep()) return std::nullopt;
  return GpuId{query.getColumn(0).getInt64()};
}

std::vector<StoredGpu> ResultsDatabase::gpus_named(std::string_view name) const {
  StatementLease query_lease = statements_->lease(std::string("SELECT ") + kGpuColumns +
                                                  " FROM gpus WHERE name = ? ORDER BY id");
  SQLite::Statement& query = query_lease.statement();
  ParameterBinder(query).add(std::string(name));
  std::vector<StoredGpu> gpus;
  while (query.executeStep()) gpus.push_back(read_gpu(query));
  return gpus;
}

template <class Problem>
ProblemId ResultsDatabase::upsert_problem(const Problem& problem) {
  require_writable("upsert_problem");
  problem.validate();
  return committed(*database_, [&] { return problem_rows(*statements_, *database_, problem); });
}

template <class Config>
ConfigId ResultsDatabase::upsert_config(const Config& config) {
  require_writable("upsert_config");
  return committed(*database_, [&] { return config_row(*statements_, config); });
}

template <class Problem>
std::optional<ProblemId> ResultsDatabase::find_problem(const Problem& problem) const {
  return find_problem_row(*statements_, family_of(problem), problem.key());
}

template <class Config>
std::optional<ConfigId> ResultsDatabase::find_config(const Config& config) const {
  return find_config_row(*statements_, family_of(config), config.key());
}

// Every family's.
#define SWR_FAMILY_ROWS(Problem, Config)                                                 \
  template ProblemId ResultsDatabase::upsert_problem(const Problem&);                    \
  template ConfigId ResultsDatabase::upsert_config(const Config&);                       \
  template std::optional<ProblemId> ResultsDatabase::find_problem(const Problem&) const; \
  template std::optional<ConfigId> ResultsDatabase::find_config(const Config&) const;
SWR_FAMILY_ROWS(AttentionProblem, AttentionConfig)
SWR_FAMILY_ROWS(AttentionBackwardProblem, AttentionBackwardConfig)
SWR_FAMILY_ROWS(GemmProblem, GemmConfig)
#undef SWR_FAMILY_ROWS

StoredGpu ResultsDatabase::gpu(GpuId id) const {
  StatementLease query_lease =
      statements_->lease(std::string("SELECT ") + kGpuColumns + " FROM gpus WHERE id = ?");
  SQLite::Statement& query = query_lease.statement();
  ParameterBinder(query).add(raw(id));
  if (!query.executeStep()) {
    throw std::out_of_range("no GPU with id " + std::to_string(raw(id)) + " in " + path_.string());
  }
  return read_gpu(query);
}

StoredProblem ResultsDatabase::problem(ProblemId id) const {
  StatementLease query_lease =
      statements_->lease("SELECT p.family, p.key, p.json, a.problem_id, " +
                         attention_shape_columns("a", schema_version_) +
                         " FROM problems AS p LEFT JOIN attention_problems AS a"
                         " ON a.problem_id = p.id WHERE p.id = ?");
  SQLite::Statement& query = query_lease.statement();
  ParameterBinder(query).add(raw(id));
  if (!query.executeStep()) {
    throw std::out_of_range("no problem with id " + std::to_string(raw(id)) + " in " +
                            path_.string());
  }
  ColumnReader columns(query);
  StoredProblem stored;
  stored.id = id;
  stored.family = columns.text();
  stored.key = columns.text();
  stored.json = nlohmann::json::parse(columns.text());
  if (columns.optional_integer()) {  // an attention_problems row exists
    stored.attention =
        read_attention_shape(columns, "problem " + stored.key + " in " + path_.string());
  }
  return stored;
}

}  // namespace swr::db
