// Files that are not usable results databases: refused with a clear error, left byte for byte.
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "db/database_location.hpp"
#include "db/results_database.hpp"
#include "db/schema_migrations.hpp"
#include "swr/usage_error.hpp"
#include "tests/db/results_fixtures.hpp"
#include "tests/generator/temporary_directory.hpp"

namespace swr::db {
namespace {

using swr::testing::file_bytes;
using swr::testing::numbered_config;
using swr::testing::ok_measurement;
using swr::testing::sample_gpu;
using swr::testing::sample_problem;
using swr::testing::TemporaryDirectory;
using swr::testing::write_file;

// Every way of opening `path` fails with a UsageError containing `expected`, and the file's
// bytes stay as they were.
void expect_refused_untouched(const std::filesystem::path& path, const std::string& expected) {
  const std::string before = file_bytes(path);
  const auto check = [&](const char* how, auto&& open) {
    try {
      open();
      ADD_FAILURE() << how << " accepted " << path;
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos)
          << how << ": " << error.what();
    }
    EXPECT_EQ(file_bytes(path), before) << how << " changed the file";
  };
  check("check_database_writable", [&] { check_database_writable(path); });
  check("read-write open", [&] { ResultsDatabase database(path, OpenMode::read_write); });
  check("read-only open", [&] { ResultsDatabase database(path, OpenMode::read_only); });
}

TEST(BadDatabaseFile, TextFileIsNotSqlite) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "notes.txt";
  write_file(path, "these are my notes, not a database\n");
  expect_refused_untouched(path, path.string() + " is not an swr results database (not SQLite)");
}

TEST(BadDatabaseFile, ShortFileIsNotSqlite) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "short.db";
  write_file(path, "SQLite");  // a prefix of the header only
  expect_refused_untouched(path, "(not SQLite)");
}

TEST(BadDatabaseFile, DamagedSqliteIsRefused) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "damaged.db";
  write_file(path, std::string("SQLite format 3\0", 16) + std::string(4080, '\x7f'));
  expect_refused_untouched(path, "is not an swr results database");
}

TEST(BadDatabaseFile, ForeignSqliteDatabaseIsRefused) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "other.db";
  {
    SQLite::Database other(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    other.exec("CREATE TABLE recipes (name TEXT, minutes INTEGER)");
    other.exec("INSERT INTO recipes VALUES ('soup', 40)");
  }
  expect_refused_untouched(path, "no schema_version");
  SQLite::Database other(path, SQLite::OPEN_READONLY);
  EXPECT_FALSE(other.tableExists("measurements"));
}

TEST(BadDatabaseFile, NewerSchemaIsRefused) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  { ResultsDatabase database(path); }
  const int future = latest_schema_version() + 1;
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("INSERT INTO schema_version (version, description, applied_at) VALUES (" +
             std::to_string(future) + ", 'from a future swr', '2100-01-01T00:00:00.000Z')");
  }
  expect_refused_untouched(
      path, "has results schema version " + std::to_string(future) + ", newer than this build");
}

// A real results database with measurements in it, closed (no -wal or -journal beside it).
std::filesystem::path tuned_database(const TemporaryDirectory& directory) {
  const auto path = directory.path() / "results.db";
  ResultsDatabase database(path);
  const GpuId gpu = database.upsert_gpu(sample_gpu());
  const ProblemId problem = database.upsert_problem(sample_problem());
  for (int i = 0; i < 40; ++i) {
    database.record_measurement(
        ok_measurement(gpu, problem, database.upsert_config(numbered_config(i)), 1.0 + i));
  }
  return path;
}

TEST(BadDatabaseFile, DatabaseCutShortByOneByteIsRefused) {
  TemporaryDirectory directory;
  const auto path = tuned_database(directory);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);
  expect_refused_untouched(path, "cut short");
}

TEST(BadDatabaseFile, DatabaseCutShortByAWholePageIsRefused) {
  TemporaryDirectory directory;
  const auto path = tuned_database(directory);
  const std::uintmax_t page_size = [&] {
    SQLite::Database database(path, SQLite::OPEN_READONLY);
    return static_cast<std::uintmax_t>(database.execAndGet("PRAGMA page_size").getInt64());
  }();
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - page_size);
  expect_refused_untouched(path, "cut short: its header counts");
}

TEST(BadDatabaseFile, DirectoryIsRefused) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "a-directory";
  std::filesystem::create_directory(path);
  EXPECT_THROW(check_database_writable(path), UsageError);
  EXPECT_THROW(ResultsDatabase database(path), UsageError);
  EXPECT_TRUE(std::filesystem::is_directory(path));
}

TEST(BadDatabaseFile, ReadOnlyOpenOfAMissingFileCreatesNothing) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "never-tuned.db";
  try {
    ResultsDatabase database(path, OpenMode::read_only);
    FAIL() << "opened a missing file read-only";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("no results database at " + path.string()),
              std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(BadDatabaseFile, EmptyFileBecomesADatabase) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "empty.db";
  write_file(path, "");  // e.g. made by `touch`: SQLite's own view is "a new database"
  ResultsDatabase database(path);
  EXPECT_EQ(database.schema_version(), latest_schema_version());
}

}  // namespace
}  // namespace swr::db
