// The bottom layer: parallel_for hands out every index once and passes an error on, programs and
// forked children report how they ended (in the environment they were given), temporary
// directories are fresh and go away, and a file lock has one holder at a time.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/child_process.hpp"
#include "support/file_lock.hpp"
#include "support/files.hpp"
#include "support/parallel_for.hpp"

namespace swr {
namespace {

std::string contents(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ParallelFor, CallsTheBodyOnceForEveryIndex) {
  for (int threads : {0, 1, 3, 64}) {
    std::vector<std::atomic<int>> calls(1000);
    parallel_for(calls.size(), threads, [&](std::size_t i) { ++calls[i]; });
    for (std::size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i], 1) << i << " " << threads;
  }
  parallel_for(0, 4, [](std::size_t) { FAIL() << "no index to hand out"; });
}

TEST(ParallelFor, UsesAtMostTheThreadsAskedForAndTheCaller) {
  std::mutex mutex;
  std::set<std::thread::id> seen;
  parallel_for(200, 3, [&](std::size_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::lock_guard lock(mutex);
    seen.insert(std::this_thread::get_id());
  });
  EXPECT_LE(seen.size(), 3u);
  std::set<std::thread::id> alone;
  parallel_for(20, 1, [&](std::size_t) { alone.insert(std::this_thread::get_id()); });
  EXPECT_EQ(alone, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(ParallelFor, RethrowsTheFirstErrorAndStopsHandingOut) {
  // The other worker waits for the throw and then takes 10 ms per index, so a pool that kept
  // handing out indices would need ~1000 s to finish; a loaded machine cannot make this pass or
  // fail by scheduling alone.
  std::atomic<int> calls{0};
  std::atomic<bool> thrown{false};
  EXPECT_THROW(parallel_for(100000, 2,
                            [&](std::size_t i) {
                              ++calls;
                              if (i == 5) {
                                thrown = true;
                                throw std::runtime_error("index 5");
                              }
                              if (i > 5) {
                                while (!thrown) std::this_thread::yield();
                                std::this_thread::sleep_for(std::chrono::milliseconds(10));
                              }
                            }),
               std::runtime_error);
  EXPECT_LT(calls, 100000);
}

TEST(RunProgram, CapturesOutputExitCodeEnvironmentAndDirectory) {
  TemporaryDirectory directory("swr-support-test-");
  ProgramFiles files;
  files.stdout_file = directory.path() / "out";
  files.stderr_file = directory.path() / "err";
  files.working_directory = directory.path();
  files.environment = {{"SWR_SUPPORT_TEST", "forty-two"}};
  const ChildExit exit =
      run_program({"/bin/sh", "-c", "echo $SWR_SUPPORT_TEST; pwd; echo oops >&2; exit 7"}, files);
  EXPECT_FALSE(exit.signaled);
  EXPECT_EQ(exit.code, 7);
  EXPECT_EQ(contents(files.stdout_file), "forty-two\n" + directory.path().string() + "\n");
  EXPECT_EQ(contents(*files.stderr_file), "oops\n");
  EXPECT_EQ(exit.describe(), "exited with code 7");
}

TEST(RunProgram, AppendsBothStreamsToOneFile) {
  TemporaryDirectory directory;
  ProgramFiles files;
  files.stdout_file = directory.path() / "log";
  files.append = true;
  run_program({"/bin/sh", "-c", "echo one; echo two >&2"}, files);
  run_program({"/bin/sh", "-c", "echo three"}, files);
  EXPECT_EQ(contents(files.stdout_file), "one\ntwo\nthree\n");
}

TEST(RunProgram, SaysWhenAProgramCannotStart) {
  TemporaryDirectory directory;
  ProgramFiles files;
  files.stdout_file = directory.path() / "out";
  try {
    run_program({(directory.path() / "no-such-program").string()}, files);
    FAIL() << "a missing program started";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("no-such-program"), std::string::npos);
  }
}

TEST(ChildProcess, RunsInThisEnvironmentWithTheGivenAdditions) {
  setenv("SWR_SUPPORT_INHERITED", "kept", 1);
  ChildProcess child({"/bin/sh", "-c", "echo \"$SWR_SUPPORT_INHERITED $SWR_DEVICE\""},
                     {{"SWR_DEVICE", "3"}});
  const ChildProcess::ReadResult line =
      child.read_line(ChildProcess::Clock::now() + std::chrono::seconds(10));
  ASSERT_EQ(line.status, ChildProcess::ReadStatus::line);
  EXPECT_EQ(line.line, "kept 3");
  unsetenv("SWR_SUPPORT_INHERITED");
}

TEST(ExclusiveFileLock, OneHolderAtATimeReleasedWhenItGoes) {
  TemporaryDirectory directory;
  const std::filesystem::path path = directory.path() / "device.lock";
  auto first = std::make_unique<ExclusiveFileLock>(path);
  ASSERT_TRUE(first->try_lock());
  first->write_holder_note("first holder");
  ExclusiveFileLock second(path);  // another open file description: flock sees two holders
  EXPECT_FALSE(second.try_lock());
  EXPECT_EQ(second.holder_note(), "first holder");
  int asked = 0;
  EXPECT_FALSE(second.lock([&] { return ++asked > 2; }, std::chrono::milliseconds(1)));
  first.reset();
  EXPECT_TRUE(second.lock({}, std::chrono::milliseconds(1)));
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms(0666));
}

TEST(RunInChild, ReportsTheExitCodeOrTheSignal) {
  const ChildExit returned = wait_for_child(run_in_child([] { return 5; }));
  EXPECT_FALSE(returned.signaled);
  EXPECT_EQ(returned.code, 5);
  const ChildExit threw =
      wait_for_child(run_in_child([]() -> int { throw std::runtime_error("no"); }));
  EXPECT_EQ(threw.code, 3);
  const ChildExit killed = wait_for_child(run_in_child([] {
    raise(SIGKILL);
    return 0;
  }));
  EXPECT_TRUE(killed.signaled);
  EXPECT_EQ(killed.code, SIGKILL);
}

TEST(TemporaryDirectory, IsFreshAndGoesAwayWithItsContents) {
  std::filesystem::path first_path;
  {
    TemporaryDirectory first("swr-support-test-");
    TemporaryDirectory second("swr-support-test-");
    first_path = first.path();
    EXPECT_NE(first.path(), second.path());
    EXPECT_TRUE(std::filesystem::is_directory(first.path()));
    EXPECT_EQ(first.path().filename().string().rfind("swr-support-test-", 0), 0u);
    std::filesystem::create_directory(first.path() / "inner");
    std::ofstream(first.path() / "inner" / "file") << "x";
    // Write permission taken away, as the database tests do: the directory still goes.
    std::filesystem::permissions(
        first.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  }
  EXPECT_FALSE(std::filesystem::exists(first_path));
}

TEST(WriteAtomically, ReplacesTheWholeFileAndLeavesNoTemporary) {
  TemporaryDirectory directory;
  const std::filesystem::path target = directory.path() / "manifest.json";
  std::ofstream(target) << "old contents that are longer";
  const std::string fresh = "new";
  write_atomically(target, fresh.data(), fresh.size());
  std::ifstream in(target);
  const std::string read((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(read, "new");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(WriteAtomically, KeepsTheOldFileWhenTheDirectoryCannotBeWritten) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  TemporaryDirectory directory;
  const std::filesystem::path target = directory.path() / "kept";
  std::ofstream(target) << "old";
  std::filesystem::permissions(
      directory.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  EXPECT_THROW(write_atomically(target, "new", 3), std::runtime_error);
  std::filesystem::permissions(directory.path(), std::filesystem::perms::owner_all);
  std::ifstream in(target);
  std::string read;
  in >> read;
  EXPECT_EQ(read, "old");
}

}  // namespace
}  // namespace swr
