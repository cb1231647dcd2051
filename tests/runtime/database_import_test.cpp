// Import: results of several machines merged into one database keep every measurement of both
// families, and the better measurement decides the best whichever order the files are merged in.
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <variant>

#include "runtime/import_sources.hpp"
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

// A copy of the database at `path` as version 1 of the schema had it: no gemm_problems table (GEMM
// problems kept their shape in problems.json), no kv_heads nor causal_align (version 4's).
void copy_at_schema_version_1(const std::filesystem::path& path,
                              const std::filesystem::path& copy) {
  SQLite::Database source(path.string(), SQLite::OPEN_READONLY);
  source.backup(copy.string().c_str(), SQLite::Database::Save);
  SQLite::Database old(copy.string(), SQLite::OPEN_READWRITE);
  old.exec("DROP TABLE gemm_problems");
  old.exec("ALTER TABLE attention_problems DROP COLUMN causal_align");
  old.exec("ALTER TABLE attention_problems DROP COLUMN kv_heads");
  old.exec("DELETE FROM schema_version WHERE version > 1");
}

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
  copy_at_schema_version_1(machine_b_.path(), old_file);
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
    EXPECT_EQ(db::problem_key(imported[i]), db::problem_key(original[i]));
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
  export_h200(machine_b_.database(), out);

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

TEST_F(DatabaseImportTest, RefusesANamedPipeOrADeviceWithoutWaiting) {
  const std::filesystem::path pipe = directory_.path() / "results.pipe";
  ASSERT_EQ(mkfifo(pipe.c_str(), 0600), 0);
  const std::filesystem::path device = directory_.path() / "zero.db";
  std::filesystem::create_symlink("/dev/zero", device);
  for (const auto& [path, expected] :
       {std::pair{pipe, "a named pipe, not a regular file"}, std::pair{device, "a device"}}) {
    try {
      read_import_source(path, machine_a_.path());
      ADD_FAILURE() << "accepted " << path;
    } catch (const UsageError& error) {
      EXPECT_NE(
          std::string(error.what()).find("bad import source '" + path.string() + "': " + expected),
          std::string::npos)
          << error.what();
    }
  }
}

constexpr const char* kGemmGrid = "m128n128k32w2x4s3-grid-swz0";
constexpr const char* kGemmBands = "m128n128k32w2x4s3-grid-swzn1792";
constexpr const char* kGemmStatic = "m128n256k64w2x4s3-static-swzm512";

// GEMM rows of another machine, beside its attention rows.
class GemmImportTest : public DatabaseImportTest {
 protected:
  GemmImportTest() : machine_g_(directory_.path() / "g.db") {
    machine_g_.add(gemm_, kGemmGrid, 1.2, "2026-02-01T10:00:00.000Z");
    machine_g_.add(gemm_, kGemmBands, 1.0, "2026-02-01T10:00:01.000Z");
    machine_g_.add_failure(gemm_, kGemmStatic, "2026-02-01T10:00:02.000Z");
    machine_g_.add(gemm_bf16_, kGemmStatic, 0.4, "2026-02-01T10:00:03.000Z");
    machine_g_.add(shape_, kFirst, 0.9, "2026-02-01T10:00:04.000Z");
  }

  static std::string best_gemm(const std::filesystem::path& path, const GemmProblem& problem) {
    const TunedGemmChoice choice = TunedCatalog::open_database(path).best("h200", problem);
    if (choice.match != MatchKind::exact) return "not exact";
    return choice.kernel->config_key + " " + std::to_string(choice.kernel->measured.median_ms);
  }

  const GemmProblem gemm_ = gemm_shape(4096, 4096, 1024);
  const GemmProblem gemm_bf16_ = gemm_shape(1000, 2048, 512, DataType::bf16);
  TunedDatabase machine_g_;
};

TEST_F(GemmImportTest, BringsGemmProblemsConfigsAndMeasurementsAcross) {
  const ImportSource source = read_import_source(machine_g_.path(), machine_a_.path());
  EXPECT_EQ(source.other_families, 0u);
  ASSERT_EQ(source.measurements.size(), 5u);
  std::size_t gemm = 0;
  for (const db::PortableMeasurement& measurement : source.measurements) {
    gemm += std::string(db::family_of(measurement)) == "gemm" ? 1 : 0;
  }
  EXPECT_EQ(gemm, 4u);
  const db::ImportCounts counts = machine_a_.database().import_measurements(source.measurements);
  EXPECT_EQ(counts.added, 5u);
  EXPECT_EQ(machine_a_.measurement_rows(), 8);
  EXPECT_EQ(best_gemm(machine_a_.path(), gemm_), std::string(kGemmBands) + " 1.000000");
  EXPECT_EQ(best_gemm(machine_a_.path(), gemm_bf16_), std::string(kGemmStatic) + " 0.400000");
  // The GEMM rows are GEMM rows in the target: problem and config families and shape table.
  SQLite::Database check(machine_a_.path().string(), SQLite::OPEN_READONLY);
  EXPECT_EQ(check.execAndGet("SELECT COUNT(*) FROM gemm_problems").getInt(), 2);
  EXPECT_EQ(check.execAndGet("SELECT COUNT(*) FROM configs WHERE family = 'gemm'").getInt(), 3);
  EXPECT_EQ(
      check.execAndGet("SELECT json FROM problems WHERE key = 'm4096_n4096_k1024_f16'").getString(),
      R"({"dtype":"f16","k":1024,"m":4096,"n":4096})");
  // Twice: nothing more.
  EXPECT_EQ(machine_a_.database().import_measurements(source.measurements).already_present, 5u);
  EXPECT_EQ(machine_a_.measurement_rows(), 8);
}

TEST_F(GemmImportTest, KeepsEveryFigureOfAGemmMeasurement) {
  TunedDatabase empty(directory_.path() / "empty.db");
  empty.database().import_measurements(machine_g_.database().portable_measurements());
  const std::vector<db::PortableMeasurement> original =
      machine_g_.database().portable_measurements();
  const std::vector<db::PortableMeasurement> imported = empty.database().portable_measurements();
  ASSERT_EQ(imported.size(), original.size());
  for (std::size_t i = 0; i < imported.size(); ++i) {
    EXPECT_EQ(db::problem_key(imported[i]), db::problem_key(original[i]));
    EXPECT_EQ(imported[i].problem.index(), original[i].problem.index());
    EXPECT_EQ(imported[i].config, original[i].config);
    EXPECT_EQ(imported[i].gpu, original[i].gpu);
    EXPECT_EQ(imported[i].record.status, original[i].record.status);
    EXPECT_EQ(imported[i].record.median_ms, original[i].record.median_ms);
    EXPECT_EQ(imported[i].record.tflops, original[i].record.tflops);
    EXPECT_EQ(imported[i].record.source_hash, original[i].record.source_hash);
    EXPECT_EQ(imported[i].record.measured_at, original[i].record.measured_at);
  }
  ASSERT_TRUE(std::holds_alternative<GemmProblem>(imported[1].problem));
  EXPECT_EQ(std::get<GemmProblem>(imported[1].problem), gemm_);
  EXPECT_EQ(std::get<GemmConfig>(imported[1].config), gemm_config_named(kGemmBands));
}

TEST_F(GemmImportTest, AnExportBringsItsGemmKernels) {
  const std::filesystem::path out = directory_.path() / "export-g";
  export_h200(machine_g_.database(), out);
  const ImportSource source = read_import_source(out, machine_a_.path());
  EXPECT_EQ(source.kind, "export");
  EXPECT_EQ(source.measurements.size(), 3u);  // one best per shape: 1 attention, 2 GEMM
  EXPECT_EQ(machine_a_.database().import_measurements(source.measurements).added, 3u);
  EXPECT_EQ(best_gemm(machine_a_.path(), gemm_), std::string(kGemmBands) + " 1.000000");
  EXPECT_EQ(machine_g_.database().import_measurements(source.measurements).added, 0u);
}

// Version 1 of the schema had no gemm_problems table, but took problems of family 'gemm' with
// their shape in problems.json: read from a migrated copy, they come across with their shape.
TEST_F(GemmImportTest, GemmRowsOfAnOlderSchemaComeAcrossFromTheMigratedCopy) {
  const std::filesystem::path old_file = directory_.path() / "old-gemm.db";
  copy_at_schema_version_1(machine_g_.path(), old_file);
  const auto size_before = std::filesystem::file_size(old_file);
  const ImportSource source = read_import_source(old_file, machine_a_.path());
  EXPECT_EQ(source.other_families, 0u);
  EXPECT_EQ(source.measurements.size(), 5u);
  EXPECT_EQ(machine_a_.database().import_measurements(source.measurements).added, 5u);
  EXPECT_EQ(best_gemm(machine_a_.path(), gemm_bf16_), std::string(kGemmStatic) + " 0.400000");
  EXPECT_EQ(std::filesystem::file_size(old_file), size_before);
  SQLite::Database check(old_file.string(), SQLite::OPEN_READONLY);
  EXPECT_EQ(check.execAndGet("SELECT MAX(version) FROM schema_version").getInt(), 1);
  EXPECT_FALSE(check.tableExists("gemm_problems"));
}

// A problem whose shape cannot be read is counted as left out, not dropped without a word.
TEST_F(GemmImportTest, SaysHowManyMeasurementsItCannotRead) {
  {
    SQLite::Database file(machine_g_.path().string(), SQLite::OPEN_READWRITE);
    file.exec("PRAGMA foreign_keys = OFF");
    file.exec(
        "DELETE FROM gemm_problems WHERE problem_id = "
        "(SELECT id FROM problems WHERE key = 'm1000_n2048_k512_bf16')");
  }
  const ImportSource source = read_import_source(machine_g_.path(), machine_a_.path());
  EXPECT_EQ(source.other_families, 1u);
  EXPECT_EQ(source.measurements.size(), 4u);
}

TEST_F(GemmImportTest, RefusesAProblemAndAConfigOfDifferentFamilies) {
  std::vector<db::PortableMeasurement> measurements = machine_g_.database().portable_measurements();
  measurements[0].config = config_named(kFirst);  // an attention config for a GEMM problem
  EXPECT_THROW(machine_a_.database().import_measurements(measurements), std::invalid_argument);
  EXPECT_EQ(machine_a_.measurement_rows(), 3);  // nothing written
}

}  // namespace
}  // namespace swr::test
