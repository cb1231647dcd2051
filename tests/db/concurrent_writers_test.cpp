// Two tuners sharing one database file: every measurement of both is kept, none is refused with
// "database is locked" (WAL mode, busy timeout, IMMEDIATE write transactions).
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "db/results_database.hpp"
#include "support/child_process.hpp"
#include "tests/db/results_fixtures.hpp"
#include "tests/generator/temporary_directory.hpp"

namespace swr::db {
namespace {

using swr::testing::numbered_config;
using swr::testing::ok_measurement;
using swr::testing::sample_gpu;
using swr::testing::sample_problem;
using swr::testing::TemporaryDirectory;

constexpr int kPerWriter = 200;

// One tuner's run: its own connection, the shared GPU and configs, its own problem.
void record_run(const std::filesystem::path& path, int seq) {
  ResultsDatabase database(path);
  const GpuId gpu = database.upsert_gpu(sample_gpu());
  const ProblemId problem = database.upsert_problem(sample_problem(seq));
  for (int i = 0; i < kPerWriter; ++i) {
    const ConfigId config = database.upsert_config(numbered_config(i));
    database.record_measurement(ok_measurement(gpu, problem, config, 1.0 + i));
  }
}

void expect_all_present(const std::filesystem::path& path, const std::vector<int>& seqs) {
  ResultsDatabase database(path, OpenMode::read_only);
  const std::optional<GpuId> gpu = database.find_gpu(sample_gpu());
  ASSERT_TRUE(gpu.has_value());
  for (int seq : seqs) {
    const std::optional<ProblemId> problem = database.find_problem(sample_problem(seq));
    ASSERT_TRUE(problem.has_value());
    EXPECT_EQ(database.measured_config_keys(*gpu, *problem).size(),
              static_cast<std::size_t>(kPerWriter));
  }
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM measurements").getInt(),
            kPerWriter * static_cast<int>(seqs.size()));
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM configs").getInt(), kPerWriter);
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM gpus").getInt(), 1);
}

// Both processes start on a file that does not exist yet, so they also race to create it.
TEST(ConcurrentWriters, TwoProcesses) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  const std::vector<int> seqs = {1024, 2048};
  int start_gate[2];
  ASSERT_EQ(pipe(start_gate), 0);
  std::vector<pid_t> children;
  for (int seq : seqs) {
    const pid_t child = run_in_child([&] {
      close(start_gate[1]);
      char go;
      if (read(start_gate[0], &go, 1) != 1) return 4;
      try {
        record_run(path, seq);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "writer for seq %d failed: %s\n", seq, error.what());
        return 1;
      }
      return 0;
    });
    children.push_back(child);
  }
  close(start_gate[0]);
  const char go[2] = {'g', 'g'};
  ASSERT_EQ(write(start_gate[1], go, 2), 2);
  close(start_gate[1]);
  for (pid_t child : children) {
    const ChildExit exit = wait_for_child(child);
    EXPECT_TRUE(!exit.signaled && exit.code == 0) << "writer " << exit.describe();
  }
  expect_all_present(path, seqs);
}

TEST(ConcurrentWriters, TwoThreadsWithTheirOwnConnections) {
  TemporaryDirectory directory;
  const auto path = directory.path() / "results.db";
  { ResultsDatabase create(path); }
  const std::vector<int> seqs = {4096, 8192};
  std::vector<std::string> failures(seqs.size());
  std::vector<std::thread> writers;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    writers.emplace_back([&, i] {
      try {
        record_run(path, seqs[i]);
      } catch (const std::exception& error) {
        failures[i] = error.what();
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
  expect_all_present(path, seqs);
}

}  // namespace
}  // namespace swr::db
