// Databases that the reader may not write (read-only directories and files, as in shared installs
// and images) are read without writing anything beside them; damaged files and stale journals
// are refused, untouched, before anything writes to them.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "db/database_file.hpp"
#include "db/database_location.hpp"
#include "db/results_database.hpp"
#include "swr/usage_error.hpp"
#include "tests/db/as_unprivileged_user.hpp"
#include "tests/db/results_fixtures.hpp"
#include "tests/generator/temporary_directory.hpp"

namespace swr::db {
namespace {

using swr::testing::file_bytes;
using swr::testing::TemporaryDirectory;
using swr::testing::write_file;
namespace fs = std::filesystem;

// A results database with one GPU and `variants` measured configs, closed (no -wal left).
fs::path tuned_database(const fs::path& directory, int variants) {
  const fs::path path = directory / "results.db";
  ResultsDatabase database(path);
  const GpuId gpu = database.upsert_gpu(swr::testing::sample_gpu());
  const ProblemId problem = database.upsert_problem(swr::testing::sample_problem());
  for (int i = 0; i < variants; ++i) {
    const ConfigId config = database.upsert_config(swr::testing::numbered_config(i));
    database.record_measurement(swr::testing::ok_measurement(gpu, problem, config, 1.0 + i));
  }
  return path;
}

std::set<std::string> names_in(const fs::path& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

std::string refusal(const std::function<void()>& open) {
  try {
    open();
  } catch (const UsageError& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(ReadOnlyAccess, ReadOnlyDirectoryAndFileAreReadByAnotherUser) {
  TemporaryDirectory directory;
  const fs::path path = tuned_database(directory.path(), 3);
  ASSERT_EQ(names_in(directory.path()), std::set<std::string>{"results.db"});
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(directory.path(), fs::perms::owner_read | fs::perms::owner_exec |
                                        fs::perms::group_read | fs::perms::group_exec |
                                        fs::perms::others_read | fs::perms::others_exec);
  const std::string failure = swr::testing::run_as_unprivileged_user([&] {
    const ResultsDatabase database(path, OpenMode::read_only);
    const auto summaries = database.problem_summaries();
    return summaries.size() == 1 && summaries[0].variants_measured == 3;
  });
  fs::permissions(directory.path(), fs::perms::owner_all, fs::perm_options::add);
  EXPECT_EQ(failure, "");
  EXPECT_EQ(names_in(directory.path()), std::set<std::string>{"results.db"});
}

TEST(ReadOnlyAccess, ReadingLeavesNoWalOrShmBehind) {
  TemporaryDirectory directory;
  const fs::path path = tuned_database(directory.path(), 2);
  {
    const ResultsDatabase database(path, OpenMode::read_only);
    EXPECT_EQ(database.problem_summaries().size(), 1u);
  }
  EXPECT_EQ(names_in(directory.path()), std::set<std::string>{"results.db"});
}

TEST(ReadOnlyAccess, ReadingWhileAWriterIsOpenSeesItsCommits) {
  TemporaryDirectory directory;
  const fs::path path = tuned_database(directory.path(), 1);
  ResultsDatabase writer(path);  // keeps a -wal beside the file: readers take the usual locks
  const GpuId gpu = writer.upsert_gpu(swr::testing::sample_gpu());
  const ProblemId problem = writer.upsert_problem(swr::testing::sample_problem());
  const ConfigId config = writer.upsert_config(swr::testing::numbered_config(7));
  writer.record_measurement(swr::testing::ok_measurement(gpu, problem, config, 0.5));
  const ResultsDatabase reader(path, OpenMode::read_only);
  EXPECT_EQ(reader.problem_summaries().at(0).variants_measured, 2);
}

TEST(DamagedDatabase, GarbagePageIsRefusedUntouchedBeforeWriting) {
  TemporaryDirectory directory;
  const fs::path path = tuned_database(directory.path(), 60);
  std::string bytes = file_bytes(path);
  constexpr std::size_t kPage = 4096;
  ASSERT_GE(bytes.size(), 4 * kPage);
  const std::size_t last_page = bytes.size() / kPage - 1;
  bytes.replace(last_page * kPage, kPage, std::string(kPage, '\x5a'));
  write_file(path, bytes);
  const std::string message = refusal([&] { ResultsDatabase database(path); });
  EXPECT_NE(message.find(path.string() + " is not an swr results database (a damaged SQLite file"),
            std::string::npos)
      << message;
  EXPECT_EQ(file_bytes(path), bytes);
}

// A rollback journal beside the file, as a writer killed mid-transaction leaves it.
void leave_stale_journal(const fs::path& path) {
  std::string journal("\xd9\xd5\x05\xf9\x20\xa1\x63\xd7", 8);       // the rollback journal's magic
  journal += std::string(4, '\0') + std::string(3, '\0') + '\x01';  // one page record
  journal.resize(4096 + 512, '\x11');
  write_file(fs::path(path.string() + "-journal"), journal);
}

TEST(StaleJournal, ReadOnlyOpenSaysWhatItIsAndHowToRecover) {
  TemporaryDirectory directory;
  const fs::path path = tuned_database(directory.path(), 2);
  leave_stale_journal(path);
  const std::string before = file_bytes(path);
  const std::string message = refusal([&] { ResultsDatabase database(path, OpenMode::read_only); });
  EXPECT_NE(message.find(path.string() + "-journal is a rollback journal left by a process killed"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("rolls the unfinished transaction back"), std::string::npos) << message;
  EXPECT_EQ(file_bytes(path), before);
}

TEST(StaleJournal, AUserWhoCannotWriteIsToldInsteadOfReadonlyDatabase) {
  TemporaryDirectory directory;
  const fs::path path = tuned_database(directory.path(), 2);
  leave_stale_journal(path);
  fs::permissions(directory.path(), fs::perms::others_read | fs::perms::others_exec,
                  fs::perm_options::add);
  const std::string failure = swr::testing::run_as_unprivileged_user([&] {
    const std::string message = refusal([&] { check_existing_database(path, 1000); });
    return message.find("-journal is a rollback journal") != std::string::npos;
  });
  EXPECT_EQ(failure, "");
}

}  // namespace
}  // namespace swr::db
