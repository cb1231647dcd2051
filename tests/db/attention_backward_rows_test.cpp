// The attention backward's rows beside the forward's: its problems (family "attention-backward",
// the same shape table) and configs, measurements of them, the runtime's questions answered per
// pass, import of both passes, and schema migration 5, which lets the family columns take the
// name (a version 4 file's CHECK allowed 'attention' and 'gemm' only).
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "db/results_database.hpp"
#include "db/schema_migrations.hpp"
#include "tests/db/results_fixtures.hpp"
#include "tests/generator/temporary_directory.hpp"

namespace swr::db {
namespace {

using swr::testing::ok_measurement;
using swr::testing::sample_gpu;
using swr::testing::sample_problem;
using swr::testing::TemporaryDirectory;

TEST(AttentionBackwardRows, APassOfItsOwnOverTheSameShape) {
  TemporaryDirectory directory;
  ResultsDatabase database(directory.path() / "results.db");
  const GpuId gpu = database.upsert_gpu(sample_gpu());
  const AttentionProblem shape = sample_problem();
  const AttentionBackwardProblem backward{shape};
  const ProblemId forward_id = database.upsert_problem(shape);
  const ProblemId backward_id = database.upsert_problem(backward);
  EXPECT_NE(forward_id, backward_id);
  EXPECT_EQ(database.find_problem(backward), backward_id);
  const ConfigId config = database.upsert_config(AttentionBackwardConfig{});
  EXPECT_EQ(database.find_config(AttentionBackwardConfig{}), config);
  database.record_measurement(ok_measurement(gpu, backward_id, config, 2.0));

  const StoredProblem stored = database.problem(backward_id);
  EXPECT_EQ(stored.family, "attention-backward");
  EXPECT_EQ(stored.key, backward.key());
  ASSERT_TRUE(stored.attention);
  EXPECT_EQ(stored.attention->key(), shape.key());
  // Each pass's tuned shapes are its own.
  EXPECT_EQ(database.tuned_attention_shapes(gpu).size(), 0u);
  ASSERT_EQ(database.tuned_attention_backward_shapes(gpu).size(), 1u);
  EXPECT_EQ(database.tuned_attention_backward_shapes_like(gpu, shape).size(), 1u);
  EXPECT_EQ(database.best_for(gpu, backward_id)->config_key, AttentionBackwardConfig{}.key());

  // Import carries the pass across.
  ResultsDatabase other(directory.path() / "other.db");
  const ImportCounts counts = other.import_measurements(database.portable_measurements());
  EXPECT_EQ(counts.added, 1u);
  const std::vector<PortableMeasurement> moved = other.portable_measurements();
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<AttentionBackwardProblem>(moved[0].problem));
  EXPECT_TRUE(std::holds_alternative<AttentionBackwardConfig>(moved[0].config));
}

TEST(AttentionBackwardRows, MigrationFiveOpensTheFamilyColumns) {
  TemporaryDirectory directory;
  const std::filesystem::path path = directory.path() / "v4.db";
  {
    // A version 4 file as version 1 wrote the two tables.
    ResultsDatabase created(path);
  }
  {
    SQLite::Database sqlite(path.string(), SQLite::OPEN_READWRITE);
    sqlite.exec("PRAGMA writable_schema = ON");
    const int cookie = sqlite.execAndGet("PRAGMA schema_version").getInt();
    sqlite.exec(
        "UPDATE sqlite_schema SET sql = replace(sql, 'CHECK (length(family) > 0)',"
        " 'CHECK (family IN (''attention'', ''gemm''))') WHERE name IN ('problems', 'configs')");
    sqlite.exec("PRAGMA schema_version = " + std::to_string(cookie + 1));
    sqlite.exec("PRAGMA writable_schema = OFF");
    sqlite.exec("DELETE FROM schema_version WHERE version > 4");
    EXPECT_THROW(sqlite.exec("INSERT INTO configs (family, key, json) VALUES"
                             " ('attention-backward', 'k', '{}')"),
                 SQLite::Exception);
  }
  ResultsDatabase migrated(path);
  EXPECT_EQ(migrated.schema_version(), latest_schema_version());
  EXPECT_NO_THROW(migrated.upsert_config(AttentionBackwardConfig{}));
  SQLite::Database sqlite(path.string(), SQLite::OPEN_READONLY);
  EXPECT_EQ(sqlite.execAndGet("PRAGMA integrity_check").getString(), "ok");
  // An empty family name is still refused.
  SQLite::Database writable(path.string(), SQLite::OPEN_READWRITE);
  EXPECT_THROW(writable.exec("INSERT INTO configs (family, key, json) VALUES ('', 'k', '{}')"),
               SQLite::Exception);
}

}  // namespace
}  // namespace swr::db
