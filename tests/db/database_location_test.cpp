// Where the database lives ($SWR_DB, XDG, HOME, --db) and the writability check made before
// any GPU work.
#include <grp.h>
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "db/database_location.hpp"
#include "db/results_database.hpp"
#include "support/child_process.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"

namespace swr::db {
namespace {

using swr::testing::TemporaryDirectory;

// Sets (or unsets, for nullopt) an environment variable for the scope, then restores it.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnvironment() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string usage_error_of(const std::filesystem::path& path) {
  try {
    check_database_writable(path);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(DatabaseLocation, CommandLineWins) {
  ScopedEnvironment database("SWR_DB", "/from/environment.db");
  const DatabaseLocation location = locate_database(std::string("/from/command/line.db"));
  EXPECT_EQ(location.path, "/from/command/line.db");
  EXPECT_EQ(location.source, DatabasePathSource::command_line);
  EXPECT_THROW(locate_database(std::string()), UsageError);
}

TEST(DatabaseLocation, EnvironmentBeforeCache) {
  ScopedEnvironment database("SWR_DB", "/from/environment.db");
  ScopedEnvironment cache("XDG_CACHE_HOME", "/xdg");
  const DatabaseLocation location = locate_database();
  EXPECT_EQ(location.path, "/from/environment.db");
  EXPECT_EQ(location.source, DatabasePathSource::environment);
}

TEST(DatabaseLocation, XdgCacheThenHome) {
  ScopedEnvironment database("SWR_DB", std::nullopt);
  ScopedEnvironment home("HOME", "/home/someone");
  {
    ScopedEnvironment cache("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(locate_database().path, "/xdg/swr/results.db");
    EXPECT_EQ(locate_database().source, DatabasePathSource::user_cache);
  }
  {
    ScopedEnvironment cache("XDG_CACHE_HOME", "relative/cache");  // invalid per the XDG spec
    EXPECT_EQ(locate_database().path, "/home/someone/.cache/swr/results.db");
  }
  {
    ScopedEnvironment cache("XDG_CACHE_HOME", std::nullopt);
    EXPECT_EQ(locate_database().path, "/home/someone/.cache/swr/results.db");
  }
}

TEST(DatabaseLocation, NoPlaceAtAll) {
  ScopedEnvironment database("SWR_DB", std::nullopt);
  ScopedEnvironment cache("XDG_CACHE_HOME", std::nullopt);
  ScopedEnvironment home("HOME", std::nullopt);
  EXPECT_THROW(locate_database(), UsageError);
}

TEST(CheckDatabaseWritable, MissingDirectoryIsNamed) {
  TemporaryDirectory directory;
  const auto missing = directory.path() / "no" / "such" / "dir";
  const std::string message = usage_error_of(missing / "results.db");
  EXPECT_NE(message.find("directory " + missing.string() + " does not exist"), std::string::npos)
      << message;
  EXPECT_FALSE(std::filesystem::exists(directory.path() / "no"));
}

TEST(CheckDatabaseWritable, OverlongNamesAreRefusedBeforeAnyWork) {
  TemporaryDirectory directory;
  // 300 bytes: longer than any file name Linux file systems take.
  const std::string message = usage_error_of(directory.path() / (std::string(297, 'a') + ".db"));
  EXPECT_NE(message.find("its file name is 300 bytes; allowed at most 247"), std::string::npos)
      << message;
  // 250 bytes fit a file system, but "<name>-journal" would not.
  const std::string near = usage_error_of(directory.path() / (std::string(247, 'b') + ".db"));
  EXPECT_NE(near.find("allowed at most 247"), std::string::npos) << near;
  const std::string in_directory =
      usage_error_of(directory.path() / std::string(256, 'c') / "results.db");
  EXPECT_NE(in_directory.find("directory name"), std::string::npos) << in_directory;
  EXPECT_TRUE(std::filesystem::is_empty(directory.path()));
  check_database_writable(directory.path() / (std::string(244, 'd') + ".db"));  // 247: fits
}

TEST(CheckDatabaseWritable, CreatesNoFile) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  check_database_writable(path);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(directory.path()));
}

TEST(CheckDatabaseWritable, UserCacheDirectoryIsCreatedOthersAreNot) {
  TemporaryDirectory directory;
  const auto cache = directory.path() / "cache" / "swr";
  check_database_writable(DatabaseLocation{cache / "results.db", DatabasePathSource::user_cache});
  EXPECT_TRUE(std::filesystem::is_directory(cache));
  EXPECT_FALSE(std::filesystem::exists(cache / "results.db"));
  const auto named = directory.path() / "named" / "results.db";
  EXPECT_THROW(check_database_writable(DatabaseLocation{named, DatabasePathSource::environment}),
               UsageError);
  EXPECT_FALSE(std::filesystem::exists(named.parent_path()));
}

// Runs `check` in a child process without root's permission override (root writes through any
// mode bits, so the check must be seen as an ordinary user sees it). Returns the child's message.
std::string check_as_unprivileged_user(const std::filesystem::path& path) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return "pipe failed";
  const pid_t child = run_in_child([&] {
    close(pipe_ends[0]);
    std::string message = "the check passed";
    if (geteuid() == 0) {
      const gid_t nobody_group = 65534;
      const uid_t nobody = 65534;
      if (setgroups(0, nullptr) != 0 || setresgid(nobody_group, nobody_group, nobody_group) != 0 ||
          setresuid(nobody, nobody, nobody) != 0) {
        message = "cannot drop root privileges";
      }
    }
    if (message == "the check passed") message = usage_error_of(path);
    return write(pipe_ends[1], message.data(), message.size()) < 0 ? 2 : 0;
  });
  close(pipe_ends[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = read(pipe_ends[0], buffer, sizeof buffer)) > 0;) message.append(buffer, n);
  close(pipe_ends[0]);
  wait_for_child(child);
  return message;
}

TEST(CheckDatabaseWritable, ReadOnlyDirectoryIsNamed) {
  TemporaryDirectory directory;
  const auto read_only = directory.path() / "read-only";
  std::filesystem::create_directory(read_only);
  namespace fs = std::filesystem;
  // Reachable by anyone (the child may run as nobody), writable by no one.
  fs::permissions(directory.path(), fs::perms::owner_all | fs::perms::group_read |
                                        fs::perms::group_exec | fs::perms::others_read |
                                        fs::perms::others_exec);
  fs::permissions(read_only, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                 fs::perms::group_exec | fs::perms::others_read |
                                 fs::perms::others_exec);
  const std::string message = check_as_unprivileged_user(read_only / "results.db");
  EXPECT_NE(message.find("directory " + read_only.string() + " is not writable"), std::string::npos)
      << message;
  fs::permissions(read_only, fs::perms::owner_all, fs::perm_options::add);
  EXPECT_TRUE(fs::is_empty(read_only));
}

TEST(CheckDatabaseWritable, ReadOnlyFileIsRefused) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  { ResultsDatabase database(path); }
  namespace fs = std::filesystem;
  fs::permissions(directory.path(), fs::perms::owner_all | fs::perms::others_read |
                                        fs::perms::others_exec | fs::perms::others_write);
  fs::permissions(path, fs::perms::owner_read | fs::perms::others_read);
  const std::string message = check_as_unprivileged_user(path);
  EXPECT_NE(message.find("the file is read-only"), std::string::npos) << message;
}

}  // namespace
}  // namespace swr::db
