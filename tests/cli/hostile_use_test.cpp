// swr-tune used carelessly or on purpose badly (issue 19): empty and overlong option values, help
// texts against what the commands do, output that cannot be written (a closed pipe, a full
// device), and Ctrl-C on the path without a GPU. The real binary in a child process, with real
// SQLite files, pipes and devices.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/Database.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "run_swr_tune.hpp"

namespace swr::test {
namespace {

namespace fs = std::filesystem;

class HostileUseTest : public ::testing::Test {
 protected:
  // No GPU is needed (h200 named, none used) and nothing outside the temporary directory is used.
  std::map<std::string, std::string> environment() const {
    return {{"HOME", (directory_.path() / "home").string()},
            {"XDG_CACHE_HOME", ""},
            {"SWR_DB", ""},
            {"SWR_CACHE_DIR", (directory_.path() / "cache").string()}};
  }
  // The main job on the path without the GPU it names: compile (or estimate) and predict, store
  // the predictions in `database`.
  std::vector<std::string> main_job(const fs::path& database) const {
    return {"--gpu", "h200", "--seq", "1024", "--limit", "3", "--db", database.string()};
  }
  int stored_predictions(const fs::path& database) const {
    if (!fs::exists(database)) return 0;
    SQLite::Database sqlite(database.string(), SQLite::OPEN_READONLY);
    return sqlite.execAndGet("SELECT COUNT(*) FROM predictions").getInt();
  }
  // Runs swr-tune with its stdout on `stdout_fd` (closed in this process afterwards); stderr is
  // returned. Exit code as run_swr_tune gives it.
  ProcessResult run_with_stdout(const std::vector<std::string>& arguments, int stdout_fd) const {
    const fs::path err_file = directory_.path() / "stderr.txt";
    const pid_t child = fork();
    if (child == 0) {
      dup2(stdout_fd, STDOUT_FILENO);
      const int err = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(err, STDERR_FILENO);
      for (const auto& [name, value] : environment()) setenv(name.c_str(), value.c_str(), 1);
      std::vector<std::string> text = {swr_tune_path()};
      text.insert(text.end(), arguments.begin(), arguments.end());
      std::vector<char*> argv;
      for (std::string& argument : text) argv.push_back(argument.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(stdout_fd);
    int status = 0;
    waitpid(child, &status, 0);
    ProcessResult result;
    result.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    std::ifstream in(err_file);
    result.err.assign(std::istreambuf_iterator<char>(in), {});
    return result;
  }

  TemporaryDirectory directory_;
};

TEST_F(HostileUseTest, EmptyOptionValuesAreBadInputNamingTheOption) {
  const std::string db = (directory_.path() / "results.db").string();
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"--limit", {"--gpu", "h200", "--seq", "1024", "--db", db, "--limit", ""}},
      {"--time-budget", {"--gpu", "h200", "--seq", "1024", "--db", db, "--time-budget", ""}},
      {"--jobs", {"--gpu", "h200", "--seq", "1024", "--db", db, "--jobs", ""}},
      {"--cache-dir", {"--gpu", "h200", "--seq", "1024", "--db", db, "--cache-dir", ""}},
      {"--out", {"compile", "--gpu", "h200", "--seq", "1024", "--out", ""}},
      {"--export", {"query", "--gpu", "h200", "--seq", "1024", "--db", db, "--export", ""}},
      {"--cache-dir", {"model", "--gpu", "h200", "--seq", "1024", "--cache-dir", ""}},
      {"--db", {"show", "--db", ""}},
  };
  for (const auto& [option, arguments] : cases) {
    const ProcessResult result = run_swr_tune(arguments, environment());
    EXPECT_EQ(result.exit_code, 2) << option << ": " << result.err;
    EXPECT_TRUE(result.out.empty()) << option << ": " << result.out;
    EXPECT_EQ(lines_of(result.err).size(), 1u) << result.err;
    EXPECT_NE(result.err.find(option + ": empty value; allowed"), std::string::npos) << result.err;
  }
  EXPECT_FALSE(fs::exists(db));
  EXPECT_FALSE(fs::exists(directory_.path() / "cache"));
}

TEST_F(HostileUseTest, AnOverlongDatabaseNameIsRefusedBeforeAnyWork) {
  const fs::path db = directory_.path() / (std::string(297, 'x') + ".db");
  const ProcessResult result = run_swr_tune(main_job(db), environment());
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("file name is 300 bytes; allowed at most 247"), std::string::npos)
      << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;  // nothing compiled or predicted first
  EXPECT_FALSE(fs::exists(directory_.path() / "cache"));
}

TEST_F(HostileUseTest, HelpNamesTheDefaultsTheCommandsUse) {
  for (const std::string command : {"show", "query", "export", "import", "report", "tune"}) {
    const ProcessResult help = run_swr_tune({command, "--help"}, environment());
    EXPECT_NE(help.out.find("else $XDG_CACHE_HOME/swr/results.db, else ~/.cache/swr/results.db"),
              std::string::npos)
        << command << ": " << help.out;
  }
  for (const std::string command : {"compile", "tune", "model", "export"}) {
    const ProcessResult help = run_swr_tune({command, "--help"}, environment());
    EXPECT_NE(help.out.find("$SWR_CACHE_DIR, else $XDG_CACHE_HOME/swr/cubins, else "
                            "~/.cache/swr/cubins"),
              std::string::npos)
        << command << ": " << help.out;
  }
  // What the help says is what happens: no SWR_DB, no XDG_CACHE_HOME: ~/.cache/swr/results.db.
  const ProcessResult show = run_swr_tune({"show"}, environment());
  EXPECT_NE(show.err.find((directory_.path() / "home" / ".cache" / "swr" / "results.db").string()),
            std::string::npos)
      << show.err;
}

TEST_F(HostileUseTest, ModelTakesACacheDirectory) {
  const fs::path file = directory_.path() / "a-file";
  std::ofstream(file) << "not a directory";
  const ProcessResult result = run_swr_tune(
      {"model", "--gpu", "h200", "--seq", "1024", "--cache-dir", file.string()}, environment());
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("bad --cache-dir '" + file.string() + "'"), std::string::npos)
      << result.err;
}

// `swr-tune ... | head -1` once head has exited: the predictions are stored, and the lost output
// is an error, not a silent success nor a SIGPIPE death before anything was stored.
TEST_F(HostileUseTest, AClosedPipeIsAnErrorAfterTheResultsAreStored) {
  const fs::path db = directory_.path() / "results.db";
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  close(pipe_ends[0]);  // the reader is gone
  const ProcessResult result = run_with_stdout(main_job(db), pipe_ends[1]);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("cannot write the output to stdout: Broken pipe"), std::string::npos)
      << result.err;
  EXPECT_GT(stored_predictions(db), 0);
}

TEST_F(HostileUseTest, AFullDeviceIsAnErrorAfterTheResultsAreStored) {
  const int full = open("/dev/full", O_WRONLY);
  if (full < 0) GTEST_SKIP() << "no /dev/full here";
  const fs::path db = directory_.path() / "results.db";
  const ProcessResult result = run_with_stdout(main_job(db), full);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("cannot write the output to stdout: No space left on device"),
            std::string::npos)
      << result.err;
  EXPECT_GT(stored_predictions(db), 0);
}

// Ctrl-C while the job without a GPU runs: one line saying what is kept and how to resume, exit
// code 130, and the database still whole.
TEST_F(HostileUseTest, InterruptOnThePathWithoutAGpuSaysHowToResume) {
  const fs::path db = directory_.path() / "results.db";
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const fs::path err_file = directory_.path() / "interrupt-stderr.txt";
  const pid_t child = fork();
  if (child == 0) {
    close(out[0]);
    dup2(out[1], STDOUT_FILENO);
    const int err = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, STDERR_FILENO);
    for (const auto& [name, value] : environment()) setenv(name.c_str(), value.c_str(), 1);
    // The whole space of a long shape: long enough to be interrupted.
    std::vector<std::string> text = {swr_tune_path(), "--gpu",  "gb10", "--seq",
                                     "131072",        "--both", "--db", db.string()};
    std::vector<char*> argv;
    for (std::string& argument : text) argv.push_back(argument.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  // Its first line ("tuning ...") comes once the job has started.
  std::string seen;
  char c = 0;
  while (seen.find('\n') == std::string::npos && read(out[0], &c, 1) == 1) seen += c;
  ASSERT_NE(seen.find("tuning "), std::string::npos) << seen;
  kill(child, SIGINT);
  std::thread drain([fd = out[0]] {
    char buffer[4096];
    while (read(fd, buffer, sizeof buffer) > 0) {
    }
  });
  int status = 0;
  waitpid(child, &status, 0);
  drain.join();
  close(out[0]);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << ": no handler";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  std::ifstream in(err_file);
  const std::string err((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(err.find("swr-tune: interrupted: "), std::string::npos) << err;
  EXPECT_NE(err.find("run the same command again to resume"), std::string::npos) << err;
  if (fs::exists(db)) {
    SQLite::Database sqlite(db.string(), SQLite::OPEN_READONLY);
    EXPECT_EQ(sqlite.execAndGet("PRAGMA integrity_check").getString(), "ok");
  }
}

}  // namespace
}  // namespace swr::test
