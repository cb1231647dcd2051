// Import: results of several machines merged into one database keep every measurement, and the
// better measurement decides the best whichever order the files are merged in.
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "runtime/import_sources.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

using swr::testing::TemporaryDirectory;

constexpr const char* kFirst = "m128n64w8s2-cyclic-grid-head_major";
constexpr const char* kSecond = "m128n64w8s2-sawtooth-static-head_major";
constexpr const char* kThird = "m64n64w4s2-cyclic-dynamic-heads_interleaved";

class DatabaseImportTest : public ::testing::Test {
 protected:
  DatabaseImportTest()
      : machine_a_(directory_.path() / "a.db"), machine_b_(directory_.path() / "b.db") {
    // Machine A measured shape_ first; B later, the same variants and one more, and a shape of
    // its own. B's run of kFirst is slower (a busy machine): the same build, so A's counts.
    machine_a_.add(shape_, kFirst, 1.0, "2026-01-01T10:00:00.000Z");
    machine_a_.add(shape_, kSecond, 1.5, "2026-01-01T10:00:01.000Z");
    machine_a_.add_failure(shape_, kThird, "2026-01-01T10:00:02.000Z");
    machine_b_.add(shape_, kFirst, 1.3, "2026-01-02T10:00:00.000Z");
    machine_b_.add(shape_, kThird, 1.1, "2026-01-02T10:00:01.000Z");
    machine_b_.add(only_b_, kSecond, 0.7, "2026-01-02T10:00:02.000Z");
  }

  static db::ImportCounts import_into(TunedDatabase& target, const std::filesystem::path& source) {
    return target.database().import_measurements(
        read_import_source(source, target.path()).measurements);
  }
  static std::string best(const std::filesystem::path& path, const AttentionProblem& problem) {
    const TunedChoice choice = TunedCatalog::open_database(path).best("h200", problem);
    if (choice.match != MatchKind::exact) return "not exact";
    return choice.kernel->config_key + " " + std::to_string(choice.kernel->measured.median_ms);
  }

  TemporaryDirectory directory_;
  const AttentionProblem shape_ = attention_shape(8, 1, 32768, 128);
  const AttentionProblem only_b_ = attention_shape(4, 4, 8192, 64);
  TunedDatabase machine_a_;
  TunedDatabase machine_b_;
};

TEST_F(DatabaseImportTest, KeepsTheBetterMeasurementAndLosesNone) {
  const db::ImportCounts counts = import_into(machine_a_, machine_b_.path());
  EXPECT_EQ(counts.added, 3u);
  EXPECT_EQ(counts.already_present, 0u);
  EXPECT_EQ(machine_a_.measurement_rows(), 6);
  // kFirst at 1.0 (A) beats B's 1.3 of the same build and kThird's 1.1 (B, valid there; A's
  // failure is older); B's own shape arrives whole.
  EXPECT_EQ(best(machine_a_.path(), shape_), std::string(kFirst) + " 1.000000");
  EXPECT_EQ(best(machine_a_.path(), only_b_), std::string(kSecond) + " 0.700000");
}

// A database written by an swr with an older schema (here: version 1, before the GEMM tables) is
// read from a migrated copy; the file itself stays as it was.
TEST_F(DatabaseImportTest, ADatabaseOfAnOlderSchemaImportsWithoutBeingWritten) {
  const std::filesystem::path old_file = directory_.path() / "old.db";
  {
    SQLite::Database source(machine_b_.path().string(), SQLite::OPEN_READONLY);
    source.backup(old_file.string().c_str(), SQLite::Database::Save);
    SQLite::Database old(old_file.string(), SQLite::OPEN_READWRITE);
    old.exec("DROP TABLE gemm_problems");
    old.exec("DELETE FROM schema_version WHERE version > 1");
  }
  const auto size_before = std::filesystem::file_size(old_file);
  const auto time_before = std::filesystem::last_write_time(old_file);
  const db::ImportCounts counts = import_into(machine_a_, old_file);
  EXPECT_EQ(counts.added, 3u);
  EXPECT_EQ(machine_a_.measurement_rows(), 6);
  EXPECT_EQ(std::filesystem::file_size(old_file), size_before);
  EXPECT_EQ(std::filesystem::last_write_time(old_file), time_before);
  SQLite::Database check(old_file.string(), SQLite::OPEN_READONLY);
  EXPECT_EQ(check.execAndGet("SELECT MAX(version) FROM schema_version").getInt(), 1);
}

TEST_F(DatabaseImportTest, TheOrderOfMergingDoesNotMatter) {
  import_into(machine_b_, machine_a_.path());
  EXPECT_EQ(machine_b_.measurement_rows(), 6);
  EXPECT_EQ(best(machine_b_.path(), shape_), std::string(kFirst) + " 1.000000");
  TunedDatabase merged(directory_.path() / "merged.db");
  import_into(merged, machine_a_.path());
  import_into(merged, machine_b_.path());  // already holds A's rows: they are not repeated
  EXPECT_EQ(merged.measurement_rows(), 6);
  EXPECT_EQ(best(merged.path(), shape_), std::string(kFirst) + " 1.000000");
}

TEST_F(DatabaseImportTest, ImportingTwiceAddsNothing) {
  import_into(machine_a_, machine_b_.path());
  const db::ImportCounts again = import_into(machine_a_, machine_b_.path());
  EXPECT_EQ(again.added, 0u);
  EXPECT_EQ(again.already_present, 3u);
  EXPECT_EQ(machine_a_.measurement_rows(), 6);
}

TEST_F(DatabaseImportTest, ANewerBuildOnAnotherMachineSupersedesTheOldOne) {
  // B compiled kFirst from an edited template: its figures replace A's older build's.
  TunedDatabase machine_c(directory_.path() / "c.db");
  machine_c.add(shape_, kFirst, 1.4, "2026-01-03T10:00:00.000Z", "edited-template");
  import_into(machine_a_, machine_c.path());
  EXPECT_EQ(machine_a_.measurement_rows(), 4);
  EXPECT_EQ(best(machine_a_.path(), shape_), std::string(kFirst) + " 1.400000");
}

TEST_F(DatabaseImportTest, KeepsFailuresAndEveryFigure) {
  TunedDatabase empty(directory_.path() / "empty.db");
  import_into(empty, machine_a_.path());
  const db::ResultsDatabase& copy = empty.database();
  const std::vector<db::PortableMeasurement> original =
      machine_a_.database().portable_measurements();
  const std::vector<db::PortableMeasurement> imported = copy.portable_measurements();
  ASSERT_EQ(imported.size(), original.size());
  for (std::size_t i = 0; i < imported.size(); ++i) {
    const db::MeasurementRecord& a = original[i].record;
    const db::MeasurementRecord& b = imported[i].record;
    EXPECT_EQ(imported[i].gpu, original[i].gpu);
    EXPECT_EQ(imported[i].problem.key(), original[i].problem.key());
    EXPECT_EQ(imported[i].config, original[i].config);
    EXPECT_EQ(b.status, a.status);
    EXPECT_EQ(b.error, a.error);
    EXPECT_EQ(b.median_ms, a.median_ms);
    EXPECT_EQ(b.p95_ms, a.p95_ms);
    EXPECT_EQ(b.tflops, a.tflops);
    EXPECT_EQ(b.l2_sector_misses, a.l2_sector_misses);
    EXPECT_EQ(b.method, a.method);
    EXPECT_EQ(b.source_hash, a.source_hash);
    EXPECT_EQ(b.measured_at, a.measured_at);
  }
}

TEST_F(DatabaseImportTest, AnExportImportsItsBestMeasurements) {
  const std::filesystem::path out = directory_.path() / "export-b";
  ExportOptions options;
  options.gpu = "h200";
  options.out_dir = out;
  export_kernels(machine_b_.database(), FakeCubinBuilder(), options);

  const ImportSource source = read_import_source(out / "manifest.json", machine_a_.path());
  EXPECT_EQ(source.kind, "export");
  EXPECT_EQ(source.measurements.size(), 2u);  // one best per shape
  const db::ImportCounts counts = machine_a_.database().import_measurements(source.measurements);
  EXPECT_EQ(counts.added, 2u);
  EXPECT_EQ(best(machine_a_.path(), only_b_), std::string(kSecond) + " 0.700000");
  // Back into the database it came from: every one is there already.
  EXPECT_EQ(machine_b_.database().import_measurements(source.measurements).added, 0u);
}

TEST_F(DatabaseImportTest, RefusesItselfAndWhatIsNotASource) {
  EXPECT_THROW(read_import_source(machine_a_.path(), machine_a_.path()), UsageError);
  EXPECT_THROW(read_import_source(directory_.path() / "missing.db", machine_a_.path()), UsageError);
  EXPECT_THROW(read_import_source(directory_.path(), machine_a_.path()),
               UsageError);  // no manifest
}

}  // namespace
}  // namespace swr::test
