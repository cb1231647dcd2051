// Child processes, in one place: ChildProcess, whose stdin, stdout and stderr are pipes to this
// one (the measurement worker); run_program, which runs a program to its end with its output in
// files (gnuplot, the command-line tests); and run_in_child, a function run in a forked copy of
// this process (the tests of what survives a killed process).
//
// ChildProcess: reads wait with a deadline (a hung child cannot hang the tuner), stderr is drained
// all the while and its last lines kept for error messages, and the child lives in its own process
// group so that Ctrl-C at the terminal reaches the tuner only (the tuner decides what to do with
// the child).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace swr {

// How a child ended.
struct ChildExit {
  bool signaled = false;  // killed by a signal (code is the signal number)
  int code = 0;           // exit code, or the signal number
  // "killed by signal 11 (Segmentation fault)" or "exited with code 3"
  std::string describe() const;
};

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts arguments[0] (a path) with `arguments`, in this process's environment with
  // `environment` added (or replacing). Throws std::runtime_error when it cannot start.
  explicit ChildProcess(const std::vector<std::string>& arguments,
                        const std::map<std::string, std::string>& environment = {});
  // Kills (SIGKILL) and reaps the child if it is still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  enum class ReadStatus { line, end_of_file, timed_out, abandoned };
  struct ReadResult {
    ReadStatus status = ReadStatus::line;
    std::string line;  // without its '\n'
  };
  // One line from the child's stdout, waiting until `deadline`. `abandon` is asked every 100 ms
  // (and after every signal); when it says true the wait ends with `abandoned`.
  ReadResult read_line(Clock::time_point deadline, const std::function<bool()>& abandon = {});

  // Writes `text` and '\n' to the child's stdin. False when the child is gone (or, at the
  // deadline, not reading).
  bool write_line(const std::string& text, Clock::time_point deadline);
  void close_stdin();

  // Waits up to `grace` for the child to exit on its own, then kills it; returns how it ended.
  ChildExit wait_for_exit(std::chrono::milliseconds grace);
  ChildExit kill_and_reap();
  bool running() const { return pid_ > 0; }

  // The last lines (at most kKeptStderrLines) the child wrote to stderr, joined with " | ".
  std::string recent_stderr() const;
  static constexpr std::size_t kKeptStderrLines = 12;

 private:
  void drain_stderr();
  void keep_stderr_text(const char* data, std::size_t size);
  ChildExit reap(bool block);

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::string stdout_buffer_;
  std::string stderr_partial_;
  std::deque<std::string> stderr_lines_;
  ChildExit exit_;
};

// Where a program run by run_program reads and writes. Its stdin is /dev/null; stdout and stderr
// go to files (created or truncated; stderr to the stdout file when not given).
struct ProgramFiles {
  std::filesystem::path stdout_file;
  std::optional<std::filesystem::path> stderr_file;
  bool append = false;  // append to the files instead of truncating
  std::optional<std::filesystem::path> working_directory;  // this process's when not given
  std::map<std::string, std::string> environment;          // added to (or replacing) this process's
};

// Runs arguments[0] (a path) with `arguments` and waits for it to end. Throws std::runtime_error
// when it cannot start.
ChildExit run_program(const std::vector<std::string>& arguments, const ProgramFiles& files);

// Runs `body` in a forked copy of this process, which exits with what `body` returns (3 when it
// throws); the caller waits with wait_for_child. For tests that must see a process die or must
// drop privileges without touching their own.
pid_t run_in_child(const std::function<int()>& body);
ChildExit wait_for_child(pid_t child);

}  // namespace swr
