#include "db/schema_migrations.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <stdexcept>
#include <vector>

#include "db/database_file.hpp"

namespace swr::db {
namespace {

void require_consecutive_versions(std::span<const Migration> migrations) {
  for (std::size_t index = 0; index < migrations.size(); ++index) {
    const int expected = static_cast<int>(index) + 1;
    if (migrations[index].version != expected) {
      throw std::logic_error("schema migration number " + std::to_string(expected) +
                             " is numbered " + std::to_string(migrations[index].version));
    }
  }
}

// The version table belongs to the mechanism, not to any migration.
constexpr const char* kCreateVersionTable =
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY,"
    " description TEXT NOT NULL,"
    " applied_at TEXT NOT NULL)";

// Times are UTC text of one fixed width, so that text order is time order.
#define SWR_UTC_TIME_GLOB \
  "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'"

// Version 1: GPUs, problems (generic row + attention detail), configs, measurements (with the
// newest per triple kept current by triggers), predictions, and the views over them.
Migration initial_schema() {
  return {
      1,
      "gpus, problems, attention_problems, configs, measurements, predictions, best view",
      {
          R"sql(
CREATE TABLE gpus (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  arch TEXT NOT NULL,
  sm_count INTEGER NOT NULL CHECK (sm_count > 0),
  l2_bytes INTEGER NOT NULL CHECK (l2_bytes > 0),
  device_name TEXT NOT NULL,
  driver_version TEXT NOT NULL,  -- as seen last; each measurement keeps its own
  cuda_version TEXT NOT NULL,
  UNIQUE (name, arch, sm_count, l2_bytes, device_name)
))sql",
          // One row per problem of any family; the family's own table holds the shape columns.
          R"sql(
CREATE TABLE problems (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL CHECK (family IN ('attention', 'gemm')),
  key TEXT NOT NULL,
  json TEXT NOT NULL,
  UNIQUE (family, key)
))sql",
          R"sql(
CREATE TABLE attention_problems (
  problem_id INTEGER PRIMARY KEY REFERENCES problems (id) ON DELETE CASCADE,
  batch INTEGER NOT NULL CHECK (batch > 0),
  heads INTEGER NOT NULL CHECK (heads > 0),
  seq_q INTEGER NOT NULL CHECK (seq_q > 0),
  seq_kv INTEGER NOT NULL CHECK (seq_kv > 0),
  head_dim INTEGER NOT NULL CHECK (head_dim > 0),
  dtype TEXT NOT NULL,
  causal INTEGER NOT NULL CHECK (causal IN (0, 1))
))sql",
          // Nearest-shape lookups fix head_dim, dtype and causal, then compare sizes.
          "CREATE INDEX attention_problems_by_shape"
          " ON attention_problems (head_dim, dtype, causal, seq_kv, seq_q, batch, heads)",
          R"sql(
CREATE TABLE configs (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL CHECK (family IN ('attention', 'gemm')),
  key TEXT NOT NULL,
  json TEXT NOT NULL,
  UNIQUE (family, key)
))sql",
          R"sql(
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  gpu_id INTEGER NOT NULL REFERENCES gpus (id),
  problem_id INTEGER NOT NULL REFERENCES problems (id),
  config_id INTEGER NOT NULL REFERENCES configs (id),
  status TEXT NOT NULL CHECK (status IN
    ('ok', 'wrong_result', 'compile_error', 'launch_error', 'fault', 'timeout')),
  error TEXT,
  median_ms REAL,
  p95_ms REAL,
  min_ms REAL,
  timed_runs INTEGER,
  tflops REAL,
  relative_error REAL,
  l2_sectors_from_tex REAL,
  l2_sector_misses REAL,
  l2_hit_rate REAL CHECK (l2_hit_rate BETWEEN 0 AND 1),  -- a fraction, not percent
  dram_read_bytes REAL,
  dram_write_bytes REAL,
  observed_intensity REAL,
  algorithmic_intensity REAL,
  roofline_fraction REAL,
  registers INTEGER,
  spill_bytes INTEGER,
  dynamic_shared_bytes INTEGER,
  blocks_per_sm INTEGER,
  method TEXT NOT NULL,  -- JSON object: warm-up, runs, L2 flush, counter source
  source_hash TEXT NOT NULL,
  toolkit_version TEXT NOT NULL,
  driver_version TEXT NOT NULL,
  measured_at TEXT NOT NULL CHECK (measured_at GLOB )sql" SWR_UTC_TIME_GLOB R"sql(),
  -- A valid result has a time and no error; a failure always says why.
  CHECK ((status = 'ok' AND error IS NULL AND median_ms IS NOT NULL AND median_ms > 0)
      OR (status <> 'ok' AND error IS NOT NULL AND error <> ''))
))sql",
          "CREATE INDEX measurements_by_triple ON measurements"
          " (gpu_id, problem_id, config_id, measured_at DESC, id DESC)",
          // Only the newest measurement of a triple counts (a --retune adds a row): "newest" is the
          // latest measured_at, then the highest id, so an imported older row does not win.
          // Triggers keep this table pointing at it, with what ranking needs, so that the best
          // of a (gpu, problem) is one index seek however many measurements the file holds.
          R"sql(
CREATE TABLE current_measurements (
  gpu_id INTEGER NOT NULL,
  problem_id INTEGER NOT NULL,
  config_id INTEGER NOT NULL,
  measurement_id INTEGER NOT NULL,
  measured_at TEXT NOT NULL,
  valid INTEGER NOT NULL,  -- status = 'ok'
  median_ms REAL,
  config_key TEXT NOT NULL,
  PRIMARY KEY (gpu_id, problem_id, config_id)
) WITHOUT ROWID)sql",
          "CREATE INDEX current_measurements_by_speed ON current_measurements"
          " (gpu_id, problem_id, valid, median_ms, config_key)",
          R"sql(
CREATE TRIGGER measurements_keep_current AFTER INSERT ON measurements
BEGIN
  DELETE FROM current_measurements
  WHERE gpu_id = NEW.gpu_id AND problem_id = NEW.problem_id AND config_id = NEW.config_id
    AND measured_at <= NEW.measured_at;
  INSERT INTO current_measurements (gpu_id, problem_id, config_id, measurement_id, measured_at,
                                    valid, median_ms, config_key)
  SELECT NEW.gpu_id, NEW.problem_id, NEW.config_id, NEW.id, NEW.measured_at,
         NEW.status = 'ok', NEW.median_ms, c.key
  FROM configs AS c
  WHERE c.id = NEW.config_id AND NOT EXISTS (
    SELECT 1 FROM current_measurements
    WHERE gpu_id = NEW.gpu_id AND problem_id = NEW.problem_id AND config_id = NEW.config_id);
END)sql",
          // Deleting the newest row of a triple makes the one before it current.
          R"sql(
CREATE TRIGGER measurements_deleted AFTER DELETE ON measurements
BEGIN
  DELETE FROM current_measurements
  WHERE gpu_id = OLD.gpu_id AND problem_id = OLD.problem_id AND config_id = OLD.config_id
    AND measurement_id = OLD.id;
  INSERT INTO current_measurements (gpu_id, problem_id, config_id, measurement_id, measured_at,
                                    valid, median_ms, config_key)
  SELECT m.gpu_id, m.problem_id, m.config_id, m.id, m.measured_at, m.status = 'ok',
         m.median_ms, c.key
  FROM measurements AS m JOIN configs AS c ON c.id = m.config_id
  WHERE m.gpu_id = OLD.gpu_id AND m.problem_id = OLD.problem_id AND m.config_id = OLD.config_id
    AND NOT EXISTS (
      SELECT 1 FROM current_measurements
      WHERE gpu_id = OLD.gpu_id AND problem_id = OLD.problem_id AND config_id = OLD.config_id)
  ORDER BY m.measured_at DESC, m.id DESC
  LIMIT 1;
END)sql",
          // A measurement is a fact about a run: a new run adds a row, it never edits one.
          R"sql(
CREATE TRIGGER measurements_are_kept BEFORE UPDATE ON measurements
BEGIN
  SELECT RAISE(ABORT, 'measurements are never changed: record a new one (the newest counts)');
END)sql",
          R"sql(
CREATE TABLE predictions (
  id INTEGER PRIMARY KEY,
  gpu_id INTEGER NOT NULL REFERENCES gpus (id),
  problem_id INTEGER NOT NULL REFERENCES problems (id),
  config_id INTEGER NOT NULL REFERENCES configs (id),
  model_name TEXT NOT NULL CHECK (model_name <> ''),
  model_version TEXT NOT NULL,
  requested_sectors REAL,
  sector_misses REAL,
  hit_rate REAL CHECK (hit_rate BETWEEN 0 AND 1),
  dram_bytes REAL,
  predicted_ms REAL,
  predicted_tflops REAL,
  sampled INTEGER NOT NULL CHECK (sampled IN (0, 1)),
  note TEXT NOT NULL,
  predicted_at TEXT NOT NULL CHECK (predicted_at GLOB )sql" SWR_UTC_TIME_GLOB R"sql()
))sql",
          "CREATE INDEX predictions_by_triple ON predictions"
          " (gpu_id, problem_id, config_id, model_name, predicted_at DESC, id DESC)",
          // A measurement or prediction pairs a problem and a config of the same family.
          R"sql(
CREATE TRIGGER measurements_same_family BEFORE INSERT ON measurements
WHEN (SELECT family FROM problems WHERE id = NEW.problem_id)
     IS NOT (SELECT family FROM configs WHERE id = NEW.config_id)
BEGIN SELECT RAISE(ABORT, 'the config and the problem of a measurement are of different families'); END)sql",
          R"sql(
CREATE TRIGGER predictions_same_family BEFORE INSERT ON predictions
WHEN (SELECT family FROM problems WHERE id = NEW.problem_id)
     IS NOT (SELECT family FROM configs WHERE id = NEW.config_id)
BEGIN SELECT RAISE(ABORT, 'the config and the problem of a prediction are of different families'); END)sql",
          // Filters on gpu_id / problem_id reach current_measurements' key through the join.
          R"sql(
CREATE VIEW latest_measurements AS
SELECT m.* FROM current_measurements AS cur
JOIN measurements AS m ON m.id = cur.measurement_id AND m.gpu_id = cur.gpu_id
  AND m.problem_id = cur.problem_id AND m.config_id = cur.config_id)sql",
          // Dropped by version 3 (one rule for the best variant: ResultsDatabase::best_for).
          R"sql(
CREATE VIEW best_measurements AS
SELECT m.* FROM current_measurements AS cur
JOIN measurements AS m ON m.id = cur.measurement_id AND m.gpu_id = cur.gpu_id
  AND m.problem_id = cur.problem_id AND m.config_id = cur.config_id
WHERE cur.valid = 1 AND NOT EXISTS (
  SELECT 1 FROM current_measurements AS faster
  WHERE faster.gpu_id = cur.gpu_id AND faster.problem_id = cur.problem_id AND faster.valid = 1
    AND (faster.median_ms < cur.median_ms
         OR (faster.median_ms = cur.median_ms AND faster.config_key < cur.config_key))))sql",
          R"sql(
CREATE VIEW latest_predictions AS
SELECT * FROM (
  SELECT p.*, ROW_NUMBER() OVER (
    PARTITION BY p.gpu_id, p.problem_id, p.config_id, p.model_name
    ORDER BY p.predicted_at DESC, p.id DESC) AS recency
  FROM predictions AS p)
WHERE recency = 1)sql",
      },
  };
}

// Version 2: the GEMM family's shape table beside attention_problems (problems.family = 'gemm',
// problems.json {"m", "n", "k", "dtype"}).
Migration gemm_problems() {
  return {
      2,
      "gemm_problems",
      {
          R"sql(
CREATE TABLE gemm_problems (
  problem_id INTEGER PRIMARY KEY REFERENCES problems (id) ON DELETE CASCADE,
  m INTEGER NOT NULL CHECK (m > 0),
  n INTEGER NOT NULL CHECK (n > 0),
  k INTEGER NOT NULL CHECK (k > 0),
  dtype TEXT NOT NULL
))sql",
          // Nearest-shape lookups fix the dtype, then compare sizes.
          "CREATE INDEX gemm_problems_by_shape ON gemm_problems (dtype, m, n, k)",
          // Version 1 already took problems of family 'gemm' (their shape only in problems.json):
          // give them their shape row, so that lookups and import find them. A row without a
          // readable shape stays without one (import counts it as left out).
          R"sql(
INSERT INTO gemm_problems (problem_id, m, n, k, dtype)
SELECT id, json_extract(json, '$.m'), json_extract(json, '$.n'), json_extract(json, '$.k'),
       json_extract(json, '$.dtype')
FROM (SELECT id, json FROM problems WHERE family = 'gemm' AND json_valid(json))
WHERE json_type(json, '$.m') = 'integer' AND json_extract(json, '$.m') > 0
  AND json_type(json, '$.n') = 'integer' AND json_extract(json, '$.n') > 0
  AND json_type(json, '$.k') = 'integer' AND json_extract(json, '$.k') > 0
  AND json_type(json, '$.dtype') = 'text')sql",
      },
  };
}

// Version 3: the best_measurements view goes. It ranked by the newest time of each config, a
// second rule beside ResultsDatabase::best_for (the fastest run of the current build), and
// nothing read it; the best variant has one definition, in C++. A version 2 file still reads
// (oldest_readable_schema_version): only this unread view differs.
Migration drop_best_view() {
  return {3,
          "drop the best_measurements view (ResultsDatabase::best_for is the rule)",
          {"DROP VIEW IF EXISTS best_measurements"}};
}

// Version 4: the attention shape gains its K/V heads (GQA/MQA; every older row is multi-head, so
// kv_heads = heads) and where its causal diagonal lies (every older row is top-left). Keys and
// JSON forms of the rows already there stay as they are: they mean the same problem.
Migration gqa_shape_columns() {
  return {4,
          "attention_problems.kv_heads and causal_align",
          {"ALTER TABLE attention_problems ADD COLUMN kv_heads INTEGER NOT NULL DEFAULT 0",
           "UPDATE attention_problems SET kv_heads = heads",
           "ALTER TABLE attention_problems ADD COLUMN causal_align TEXT NOT NULL DEFAULT "
           "'top_left' CHECK (causal_align IN ('top_left', 'bottom_right'))"}};
}

// Version 5: problems.family and configs.family take any kernel family's name, not only
// 'attention' and 'gemm': a new family (the attention backward first) is a descriptor, not a
// schema change. SQLite cannot alter a CHECK; loosening one changes nothing stored, so the tables'
// definitions are rewritten in place and the schema cookie bumped (SQLite's documented procedure
// for such changes, https://sqlite.org/lang_altertable.html section 7). Every stored row
// satisfies the new rule.
Migration any_family_name() {
  Migration migration{5, "problems.family and configs.family: any family's name", {}, {}};
  migration.apply = [](SQLite::Database& database) {
    // Only the tables whose definition still holds version 1's CHECK (a file copied from a newer
    // one and set back, as the tests make, already takes any name).
    const char* kOldCheck = "'CHECK (family IN (''attention'', ''gemm''))'";
    const std::string tables_with_old_check =
        std::string(" WHERE type = 'table' AND name IN ('problems', 'configs') AND instr(sql, ") +
        kOldCheck + ") > 0";
    const int found =
        database.execAndGet("SELECT COUNT(*) FROM sqlite_schema" + tables_with_old_check).getInt();
    if (found == 0) return;
    const int cookie = database.execAndGet("PRAGMA schema_version").getInt();
    database.exec("PRAGMA writable_schema = ON");
    database.exec(std::string("UPDATE sqlite_schema SET sql = replace(sql, ") + kOldCheck +
                  ", 'CHECK (length(family) > 0)')" + tables_with_old_check);
    database.exec("PRAGMA schema_version = " + std::to_string(cookie + 1));
    database.exec("PRAGMA writable_schema = OFF");
    // The rewritten definitions must parse, and the file still check.
    const std::string verdict = database.execAndGet("PRAGMA quick_check(1)").getString();
    if (verdict != "ok") {
      throw std::runtime_error("schema migration 5 left the file failing its check: " + verdict);
    }
  };
  return migration;
}

// Version 6: whether a row has counters and why not (CounterStatus in records.hpp), with a note.
// Rows stored before it keep NULL: measurements are never changed, and a reader derives their
// status from what they hold (derived_counter_status), the same rule for every older file. A file
// set back to an older version that still has the columns keeps them.
Migration counter_status_columns() {
  Migration migration{6, "measurements.counter_status and counter_note", {}, {}};
  migration.apply = [](SQLite::Database& database) {
    const auto has_column = [&](const char* name) {
      SQLite::Statement query(
          database, "SELECT COUNT(*) FROM pragma_table_info('measurements') WHERE name = ?");
      query.bind(1, name);
      query.executeStep();
      return query.getColumn(0).getInt() > 0;
    };
    if (!has_column("counter_status")) {
      database.exec(
          "ALTER TABLE measurements ADD COLUMN counter_status TEXT CHECK (counter_status IN "
          "('collected', 'skipped_by_policy', 'unavailable', 'failed', 'not_reached'))");
    }
    if (!has_column("counter_note")) {
      database.exec("ALTER TABLE measurements ADD COLUMN counter_note TEXT");
    }
  };
  return migration;
}

#undef SWR_UTC_TIME_GLOB

}  // namespace

int read_schema_version(SQLite::Database& database) {
  if (!database.tableExists("schema_version")) return 0;
  return database.execAndGet("SELECT COALESCE(MAX(version), 0) FROM schema_version").getInt();
}

void apply_migrations(SQLite::Database& database, std::span<const Migration> migrations) {
  require_consecutive_versions(migrations);
  const int latest = static_cast<int>(migrations.size());
  for (const Migration& migration : migrations) {
    if (read_schema_version(database) >= migration.version) continue;  // cheap check, no lock
    SQLite::Transaction transaction(database, SQLite::TransactionBehavior::IMMEDIATE);
    // Another process may have migrated while this one waited for the write lock.
    const int current = read_schema_version(database);
    if (current > latest) throw schema_too_new(database.getFilename(), current, latest);
    if (current >= migration.version) continue;
    database.exec(kCreateVersionTable);
    for (const std::string& statement : migration.statements) database.exec(statement);
    if (migration.apply) migration.apply(database);
    SQLite::Statement record(database,
                             "INSERT INTO schema_version (version, description, applied_at) "
                             "VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
    record.bind(1, migration.version);
    record.bind(2, migration.description);
    record.exec();
    transaction.commit();
  }
  const int current = read_schema_version(database);
  if (current > latest) throw schema_too_new(database.getFilename(), current, latest);
}

std::span<const Migration> schema_migrations() {
  static const std::vector<Migration> migrations = {initial_schema(),  gemm_problems(),
                                                    drop_best_view(),  gqa_shape_columns(),
                                                    any_family_name(), counter_status_columns()};
  return migrations;
}

int latest_schema_version() {
  return static_cast<int>(schema_migrations().size());
}

int oldest_readable_schema_version() {
  return 2;
}

}  // namespace swr::db
