// The schema and the migration mechanism, on real SQLite files.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <vector>

#include "db/results_database.hpp"
#include "db/schema_migrations.hpp"
#include "swr/usage_error.hpp"
#include "tests/db/results_fixtures.hpp"
#include "tests/generator/temporary_directory.hpp"

namespace swr::db {
namespace {

using swr::testing::TemporaryDirectory;

bool has_object(SQLite::Database& database, const std::string& type, const std::string& name) {
  SQLite::Statement query(database,
                          "SELECT count(*) FROM sqlite_master WHERE type = ? AND name = ?");
  query.bind(1, type);
  query.bind(2, name);
  query.executeStep();
  return query.getColumn(0).getInt() == 1;
}

// Every real migration, then a made-up next version.
std::vector<Migration> migrations_with_fake_next() {
  std::vector<Migration> migrations(schema_migrations().begin(), schema_migrations().end());
  migrations.push_back({latest_schema_version() + 1,
                        "test only: a note on measurements and a new table",
                        {"ALTER TABLE measurements ADD COLUMN test_note TEXT",
                         "CREATE TABLE test_extra (id INTEGER PRIMARY KEY, value TEXT)"}});
  return migrations;
}

TEST(SchemaMigrations, ListIsNumberedFromOne) {
  ASSERT_GE(schema_migrations().size(), 1u);
  for (std::size_t i = 0; i < schema_migrations().size(); ++i) {
    EXPECT_EQ(schema_migrations()[i].version, static_cast<int>(i) + 1);
  }
  EXPECT_EQ(latest_schema_version(), static_cast<int>(schema_migrations().size()));
}

TEST(SchemaMigrations, NewDatabaseGetsTheWholeSchema) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  {
    ResultsDatabase database(path);
    EXPECT_EQ(database.schema_version(), latest_schema_version());
  }
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  for (const char* table : {"schema_version", "gpus", "problems", "attention_problems",
                            "gemm_problems", "configs", "measurements", "predictions"}) {
    EXPECT_TRUE(has_object(raw, "table", table)) << table;
  }
  for (const char* view : {"latest_measurements", "latest_predictions"}) {
    EXPECT_TRUE(has_object(raw, "view", view)) << view;
  }
  // Version 3 dropped it: the best variant is ResultsDatabase::best_for's rule only.
  EXPECT_FALSE(has_object(raw, "view", "best_measurements"));
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "wal");
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM schema_version").getInt(),
            latest_schema_version());
  EXPECT_EQ(raw.execAndGet("SELECT description FROM schema_version WHERE version = 1").getString(),
            schema_migrations()[0].description);
}

TEST(SchemaMigrations, ReopeningAppliesNothingTwice) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  { ResultsDatabase first(path); }
  { ResultsDatabase second(path); }
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM schema_version").getInt(),
            latest_schema_version());
}

TEST(SchemaMigrations, EmptySqliteFileIsVersionZeroAndGetsCreated) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("VACUUM");  // writes the header of a database with no tables
    EXPECT_EQ(read_schema_version(raw), 0);
  }
  ASSERT_EQ(swr::testing::file_bytes(path).substr(0, 15), "SQLite format 3");
  ResultsDatabase database(path);
  EXPECT_EQ(database.schema_version(), latest_schema_version());
}

TEST(SchemaMigrations, ForeignKeysAreEnforced) {
  TemporaryDirectory directory;
  ResultsDatabase database(directory.path() / "results.db");
  // GPU 77 and problem 78 do not exist.
  const auto record = swr::testing::ok_measurement(GpuId{77}, ProblemId{78}, ConfigId{79}, 1.0);
  EXPECT_THROW(database.record_measurement(record), SQLite::Exception);
}

// The cached statements of a connection are finalized before it closes: the close then
// completes and, as the last connection of a WAL database, removes the -wal file.
TEST(ResultsDatabaseLifetime, ClosingLeavesNoWalFileBehind) {
  TemporaryDirectory directory;
  const auto first = directory.path() / "first.db";
  const auto second = directory.path() / "second.db";
  const auto wal_of = [](const std::filesystem::path& path) { return path.string() + "-wal"; };
  ResultsDatabase database(first);
  const GpuId gpu = database.upsert_gpu(swr::testing::sample_gpu());
  const ProblemId problem = database.upsert_problem(swr::testing::sample_problem());
  database.record_measurement(swr::testing::ok_measurement(
      gpu, problem, database.upsert_config(swr::testing::numbered_config(0)), 1.0));
  EXPECT_TRUE(database.best_for(gpu, problem).has_value());
  ASSERT_TRUE(std::filesystem::exists(wal_of(first)));
  database = ResultsDatabase(second);  // closes first.db
  EXPECT_FALSE(std::filesystem::exists(wal_of(first)));
  EXPECT_FALSE(database.best_for(gpu, problem).has_value());
  {
    ResultsDatabase moved(std::move(database));
    EXPECT_TRUE(std::filesystem::exists(wal_of(second)));
  }
  EXPECT_FALSE(std::filesystem::exists(wal_of(second)));
}

// v0 -> v1, then this build's version, then a made-up next one, with the data kept throughout.
TEST(MigrationRunner, AppliesStepByStepAndKeepsData) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  const std::vector<Migration> migrations = migrations_with_fake_next();
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    EXPECT_EQ(read_schema_version(raw), 0);
    apply_migrations(raw, std::span(migrations).first(1));
    EXPECT_EQ(read_schema_version(raw), 1);
    EXPECT_FALSE(raw.tableExists("test_extra"));
  }
  std::int64_t measurement_id = 0;
  {
    ResultsDatabase database(path);  // migrates the v1 file to this build's version
    const GpuId gpu = database.upsert_gpu(swr::testing::sample_gpu());
    const ProblemId problem = database.upsert_problem(swr::testing::sample_problem());
    const ConfigId config = database.upsert_config(swr::testing::numbered_config(0));
    measurement_id =
        database.record_measurement(swr::testing::ok_measurement(gpu, problem, config, 2.5));
  }
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    EXPECT_EQ(read_schema_version(raw), latest_schema_version());
    apply_migrations(raw, migrations);
    EXPECT_EQ(read_schema_version(raw), latest_schema_version() + 1);
    EXPECT_TRUE(raw.tableExists("test_extra"));
    SQLite::Statement query(raw, "SELECT median_ms, test_note FROM measurements WHERE id = ?");
    query.bind(1, measurement_id);
    ASSERT_TRUE(query.executeStep());
    EXPECT_DOUBLE_EQ(query.getColumn(0).getDouble(), 2.5);
    EXPECT_TRUE(query.getColumn(1).isNull());
    // Running the list again changes nothing.
    apply_migrations(raw, migrations);
    EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM schema_version").getInt(),
              latest_schema_version() + 1);
  }
  // This build does not know the made-up version: the migrated file is now too new for it.
  EXPECT_THROW(ResultsDatabase database(path), UsageError);
}

// Files written before the best_measurements view was dropped (version 2, e.g. the committed
// bench results) still open read-only and answer with the one rule; a version 1 file does not
// (it lacks gemm_problems) and says how to upgrade it.
TEST(SchemaMigrations, AVersionTwoFileReadsWithoutMigrating) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    apply_migrations(raw, schema_migrations().first(1));
  }
  try {
    ResultsDatabase database(path, OpenMode::read_only);
    ADD_FAILURE() << "a version 1 file opened read-only";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("reads versions 2 to"), std::string::npos)
        << error.what();
  }
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    apply_migrations(raw, schema_migrations().first(2));
    // What a version 2 file holds: a fast run and a slower re-run of the same build.
    raw.exec("INSERT INTO gpus VALUES (1, 'h200', 'sm_90a', 132, 62914560, 'H200', '580', '13.0')");
    raw.exec("INSERT INTO problems VALUES (1, 'attention', 'p', '{}')");
    raw.exec("INSERT INTO attention_problems VALUES (1, 1, 8, 1024, 1024, 128, 'f16', 0)");
    raw.exec("INSERT INTO configs VALUES (1, 'attention', 'c', '{}')");
    for (const char* run :
         {"(1, 1.0, '2025-01-01T00:00:00.000Z')", "(2, 3.0, '2025-01-02T00:00:00.000Z')"}) {
      raw.exec(std::string("INSERT INTO measurements (id, gpu_id, problem_id, config_id, status,"
                           " median_ms, measured_at, method, source_hash, toolkit_version,"
                           " driver_version) SELECT v.column1, 1, 1, 1, 'ok', v.column2,"
                           " v.column3, '{}', 'h', '13.0', '580' FROM (VALUES ") +
               run + ") AS v");
    }
    EXPECT_TRUE(has_object(raw, "view", "best_measurements"));
  }
  ResultsDatabase database(path, OpenMode::read_only);
  EXPECT_EQ(database.schema_version(), 2);
  const std::optional<StoredMeasurement> best = database.best_for(GpuId{1}, ProblemId{1});
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->id, 1);
}

// Version 4 gives every attention shape its K/V heads and causal alignment: rows stored before
// are multi-head and top-left, and keep their keys and JSON. A version 3 file still reads
// read-only as such; a GQA bottom-right shape is stored and read back with both.
TEST(SchemaMigrations, AVersionThreeFileReadsAndMigratesAsMultiHeadTopLeft) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    apply_migrations(raw, schema_migrations().first(3));
    raw.exec(
        "INSERT INTO problems VALUES (1, 'attention', 'b8_h4_sq1024_skv1024_d128_f16_causal',"
        " '{\"batch\":8,\"causal\":true,\"dtype\":\"f16\",\"head_dim\":128,\"heads\":4,"
        "\"seq_kv\":1024,\"seq_q\":1024}')");
    raw.exec("INSERT INTO attention_problems VALUES (1, 8, 4, 1024, 1024, 128, 'f16', 1)");
  }
  {
    const ResultsDatabase read_only(path, OpenMode::read_only);
    EXPECT_EQ(read_only.schema_version(), 3);
    const StoredProblem stored = read_only.problem(ProblemId{1});
    ASSERT_TRUE(stored.attention);
    EXPECT_EQ(stored.attention->kv_head_count(), 4);
    EXPECT_EQ(stored.attention->causal_align, CausalAlignment::top_left);
    EXPECT_EQ(stored.attention->key(), stored.key);
  }
  ResultsDatabase database(path);
  EXPECT_EQ(database.schema_version(), latest_schema_version());
  const StoredProblem migrated = database.problem(ProblemId{1});
  ASSERT_TRUE(migrated.attention);
  EXPECT_EQ(migrated.key, "b8_h4_sq1024_skv1024_d128_f16_causal");
  EXPECT_EQ(migrated.attention->kv_heads, 4);
  EXPECT_EQ(migrated.attention->key(), migrated.key);
  EXPECT_EQ(database.find_problem(*migrated.attention), ProblemId{1});

  AttentionProblem prefill{1, 32, 512, 2048, 128, DataType::bf16, true};
  prefill.kv_heads = 8;
  prefill.causal_align = CausalAlignment::bottom_right;
  const ProblemId id = database.upsert_problem(prefill);
  EXPECT_NE(id, ProblemId{1});
  const StoredProblem stored = database.problem(id);
  ASSERT_TRUE(stored.attention);
  EXPECT_EQ(stored.key, "b1_h32_kv8_sq512_skv2048_d128_bf16_causal_br");
  EXPECT_EQ(stored.attention->kv_heads, 8);
  EXPECT_EQ(stored.attention->causal_align, CausalAlignment::bottom_right);
  EXPECT_EQ(stored.json.at("kv_heads"), 8);
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("SELECT kv_heads || ' ' || causal_align FROM attention_problems"
                           " WHERE problem_id = 1")
                .getString(),
            "4 top_left");
}

// Version 6 stores whether a row has counters and why not. Rows of an older file are never
// changed: they read with the status their figures give (counters: collected; failed: not reached;
// else unavailable), before and after the migration; a new row keeps what it was given.
TEST(SchemaMigrations, AVersionFiveFileReadsCounterStatusFromItsFigures) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    apply_migrations(raw, schema_migrations().first(5));
    raw.exec("INSERT INTO gpus VALUES (1, 'h200', 'sm_90a', 132, 62914560, 'H200', '580', '13.0')");
    raw.exec("INSERT INTO problems VALUES (1, 'attention', 'p', '{}')");
    raw.exec(
        "INSERT INTO configs VALUES (1, 'attention', 'c1', '{}'), (2, 'attention', 'c2', '{}'),"
        " (3, 'attention', 'c3', '{}')");
    raw.exec(
        "INSERT INTO measurements (id, gpu_id, problem_id, config_id, status, error, median_ms,"
        " l2_sector_misses, measured_at, method, source_hash, toolkit_version, driver_version)"
        " VALUES (1, 1, 1, 1, 'ok', NULL, 1.0, 42.0, '2025-01-01T00:00:00.000Z', '{}', 'h', '13.0',"
        " '580'), (2, 1, 1, 2, 'ok', NULL, 2.0, NULL, '2025-01-01T00:00:00.000Z', '{}', 'h',"
        " '13.0', '580'), (3, 1, 1, 3, 'fault', 'trap', NULL, NULL, '2025-01-01T00:00:00.000Z',"
        " '{}', 'h', '13.0', '580')");
  }
  const auto statuses = [](const ResultsDatabase& database) {
    std::map<std::string, CounterStatus> by_key;
    for (const StoredMeasurement& stored : database.measurements_for(GpuId{1}, ProblemId{1})) {
      by_key[stored.config_key] = stored.record.counter_status.value();
    }
    return by_key;
  };
  const std::map<std::string, CounterStatus> expected = {{"c1", CounterStatus::collected},
                                                         {"c2", CounterStatus::unavailable},
                                                         {"c3", CounterStatus::not_reached}};
  {
    const ResultsDatabase read_only(path, OpenMode::read_only);
    EXPECT_EQ(read_only.schema_version(), 5);
    EXPECT_EQ(statuses(read_only), expected);
  }
  ResultsDatabase database(path);
  EXPECT_EQ(database.schema_version(), 6);
  EXPECT_EQ(statuses(database), expected);
  {
    SQLite::Database raw(path, SQLite::OPEN_READONLY);
    EXPECT_EQ(
        raw.execAndGet("SELECT COUNT(*) FROM measurements WHERE counter_status IS NULL").getInt(),
        3);
  }

  MeasurementRecord skipped = testing::ok_measurement(GpuId{1}, ProblemId{1}, ConfigId{2}, 1.5);
  skipped.counter_status = CounterStatus::skipped_by_policy;
  skipped.counter_note = "--counters top: not among the 5 fastest";
  database.record_measurement(skipped);
  const std::vector<StoredMeasurement> rows = database.measurements_for(GpuId{1}, ProblemId{1});
  const auto c2 = std::find_if(rows.begin(), rows.end(),
                               [](const StoredMeasurement& row) { return row.config_key == "c2"; });
  ASSERT_NE(c2, rows.end());
  EXPECT_EQ(c2->record.counter_status, CounterStatus::skipped_by_policy);
  EXPECT_EQ(c2->record.counter_note, "--counters top: not among the 5 fastest");
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  EXPECT_THROW(raw.exec("INSERT INTO measurements (gpu_id, problem_id, config_id, status,"
                        " median_ms, measured_at, method, source_hash, toolkit_version,"
                        " driver_version, counter_status) VALUES (1, 1, 1, 'ok', 1.0,"
                        " '2025-01-03T00:00:00.000Z', '{}', 'h', '13.0', '580', 'maybe')"),
               SQLite::Exception);
}

TEST(MigrationRunner, FailingMigrationIsRolledBackWhole) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  { ResultsDatabase database(path); }
  std::vector<Migration> migrations(schema_migrations().begin(), schema_migrations().end());
  migrations.push_back({latest_schema_version() + 1,
                        "test only: fails halfway",
                        {"CREATE TABLE half_done (id INTEGER PRIMARY KEY)", "THIS IS NOT SQL"}});
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  EXPECT_THROW(apply_migrations(raw, migrations), SQLite::Exception);
  EXPECT_EQ(read_schema_version(raw), latest_schema_version());
  EXPECT_FALSE(raw.tableExists("half_done"));
}

TEST(MigrationRunner, RefusesAListWithAGap) {
  TemporaryDirectory directory;
  SQLite::Database raw(directory.path() / "results.db",
                       SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  std::vector<Migration> migrations(schema_migrations().begin(), schema_migrations().end());
  migrations.push_back(
      {latest_schema_version() + 2, "test only: skips one", {"CREATE TABLE skipped (id INTEGER)"}});
  EXPECT_THROW(apply_migrations(raw, migrations), std::logic_error);
  EXPECT_EQ(read_schema_version(raw), 0);  // checked before anything is applied
}

TEST(MigrationRunner, RefusesADatabaseNewerThanTheList) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  const std::vector<Migration> migrations = migrations_with_fake_next();
  SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  apply_migrations(raw, migrations);
  try {
    apply_migrations(raw, std::span(migrations).first(1));
    FAIL() << "a database newer than the list was accepted";
  } catch (const UsageError& error) {
    const std::string newer = "version " + std::to_string(latest_schema_version() + 1);
    EXPECT_NE(std::string(error.what()).find(newer), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace swr::db
