#include "support/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace swr {
namespace {

constexpr std::size_t kMaximumKeptLineLength = 400;

void close_if_open(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

void set_non_blocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int milliseconds_until(ChildProcess::Clock::time_point deadline, int cap_ms) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ChildProcess::Clock::now())
          .count();
  return static_cast<int>(std::max<long long>(0, std::min<long long>(left, cap_ms)));
}

// A pair of pipe ends, both close-on-exec: the child gets its end through dup2 only.
void make_pipe(int ends[2]) {
  if (pipe2(ends, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
}

// This process's environment with `overrides` added or replacing, as posix_spawn takes it: the
// strings, and the pointers into them (null-terminated) once `text` stays put.
struct SpawnEnvironment {
  std::vector<std::string> text;
  std::vector<char*> pointers;

  explicit SpawnEnvironment(const std::map<std::string, std::string>& overrides) {
    std::map<std::string, std::string> merged;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      const std::string line = *entry;
      const auto equals = line.find('=');
      if (equals != std::string::npos) merged[line.substr(0, equals)] = line.substr(equals + 1);
    }
    for (const auto& [name, value] : overrides) merged[name] = value;
    for (const auto& [name, value] : merged) text.push_back(name + "=" + value);
    for (std::string& entry : text) pointers.push_back(entry.data());
    pointers.push_back(nullptr);
  }
};

}  // namespace

std::string ChildExit::describe() const {
  if (signaled) {
    const char* name = strsignal(code);
    return "killed by signal " + std::to_string(code) +
           (name ? std::string(" (") + name + ")" : "");
  }
  return "exited with code " + std::to_string(code);
}

static ChildExit exit_of(int status) {
  if (WIFSIGNALED(status)) return {true, WTERMSIG(status)};
  return {false, WIFEXITED(status) ? WEXITSTATUS(status) : 0};
}

ChildProcess::ChildProcess(const std::vector<std::string>& arguments,
                           const std::map<std::string, std::string>& environment) {
  if (arguments.empty()) throw std::invalid_argument("a child process needs a program");
  int input[2], output[2], error[2];
  make_pipe(input);
  make_pipe(output);
  make_pipe(error);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, error[1], STDERR_FILENO);

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &empty);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<std::string> argument_text = arguments;
  std::vector<char*> argv;
  for (std::string& argument : argument_text) argv.push_back(argument.data());
  argv.push_back(nullptr);
  SpawnEnvironment spawn_environment(environment);
  const int spawn_error = posix_spawn(&pid_, argv[0], &actions, &attributes, argv.data(),
                                      spawn_environment.pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(input[0]);
  close(output[1]);
  close(error[1]);
  if (spawn_error != 0) {
    close(input[1]);
    close(output[0]);
    close(error[0]);
    pid_ = -1;
    throw std::runtime_error("cannot start " + arguments[0] + ": " + std::strerror(spawn_error));
  }
  stdin_fd_ = input[1];
  stdout_fd_ = output[0];
  stderr_fd_ = error[0];
  set_non_blocking(stdin_fd_);
  set_non_blocking(stdout_fd_);
  set_non_blocking(stderr_fd_);
}

ChildProcess::~ChildProcess() {
  if (running()) kill_and_reap();
  close_if_open(stdin_fd_);
  close_if_open(stdout_fd_);
  close_if_open(stderr_fd_);
}

ChildProcess::ReadResult ChildProcess::read_line(Clock::time_point deadline,
                                                 const std::function<bool()>& abandon) {
  while (true) {
    if (const auto newline = stdout_buffer_.find('\n'); newline != std::string::npos) {
      ReadResult result{ReadStatus::line, stdout_buffer_.substr(0, newline)};
      stdout_buffer_.erase(0, newline + 1);
      return result;
    }
    if (stdout_fd_ < 0) return {ReadStatus::end_of_file, {}};
    if (abandon && abandon()) return {ReadStatus::abandoned, {}};
    if (Clock::now() >= deadline) return {ReadStatus::timed_out, {}};

    pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
    const int ready = poll(fds, stderr_fd_ >= 0 ? 2 : 1, milliseconds_until(deadline, 100));
    if (ready < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
    }
    if (ready <= 0) continue;
    if (stderr_fd_ >= 0 && fds[1].revents != 0) drain_stderr();
    if (fds[0].revents != 0) {
      char chunk[65536];
      const ssize_t count = read(stdout_fd_, chunk, sizeof(chunk));
      if (count > 0) {
        stdout_buffer_.append(chunk, static_cast<std::size_t>(count));
      } else if (count == 0 || (errno != EAGAIN && errno != EINTR)) {
        drain_stderr();  // the child's last words, if it is gone
        close_if_open(stdout_fd_);
      }
    }
  }
}

bool ChildProcess::write_line(const std::string& text, Clock::time_point deadline) {
  const std::string line = text + '\n';
  std::size_t written = 0;
  while (written < line.size()) {
    if (stdin_fd_ < 0) return false;
    const ssize_t count = write(stdin_fd_, line.data() + written, line.size() - written);
    if (count > 0) {
      written += static_cast<std::size_t>(count);
      continue;
    }
    if (count < 0 && errno == EINTR) continue;
    if (count < 0 && errno != EAGAIN) return false;  // EPIPE: the child is gone
    if (Clock::now() >= deadline) return false;
    // The pipe is full: wait for room, and keep the child's stderr flowing meanwhile.
    pollfd fds[2] = {{stdin_fd_, POLLOUT, 0}, {stderr_fd_, POLLIN, 0}};
    if (poll(fds, stderr_fd_ >= 0 ? 2 : 1, milliseconds_until(deadline, 100)) > 0 &&
        stderr_fd_ >= 0 && fds[1].revents != 0) {
      drain_stderr();
    }
  }
  return true;
}

void ChildProcess::close_stdin() {
  close_if_open(stdin_fd_);
}

void ChildProcess::drain_stderr() {
  while (stderr_fd_ >= 0) {
    char chunk[8192];
    const ssize_t count = read(stderr_fd_, chunk, sizeof(chunk));
    if (count > 0) {
      keep_stderr_text(chunk, static_cast<std::size_t>(count));
      continue;
    }
    if (count < 0 && errno == EINTR) continue;
    if (count == 0 || errno != EAGAIN) close_if_open(stderr_fd_);
    return;
  }
}

void ChildProcess::keep_stderr_text(const char* data, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] != '\n') {
      if (stderr_partial_.size() < kMaximumKeptLineLength) stderr_partial_ += data[i];
      continue;
    }
    if (!stderr_partial_.empty()) stderr_lines_.push_back(std::move(stderr_partial_));
    stderr_partial_.clear();
    while (stderr_lines_.size() > kKeptStderrLines) stderr_lines_.pop_front();
  }
}

std::string ChildProcess::recent_stderr() const {
  std::string text;
  for (const std::string& line : stderr_lines_) text += (text.empty() ? "" : " | ") + line;
  if (!stderr_partial_.empty()) text += (text.empty() ? "" : " | ") + stderr_partial_;
  return text;
}

ChildExit ChildProcess::reap(bool block) {
  if (!running()) return exit_;
  int status = 0;
  pid_t result;
  do {
    result = waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (result < 0 && errno == EINTR);
  if (result == 0) return exit_;  // still running
  if (result == pid_) exit_ = exit_of(status);
  pid_ = -1;
  return exit_;
}

ChildExit ChildProcess::wait_for_exit(std::chrono::milliseconds grace) {
  const Clock::time_point deadline = Clock::now() + grace;
  while (running()) {
    reap(false);
    if (!running()) break;
    if (Clock::now() >= deadline) return kill_and_reap();
    drain_stderr();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  drain_stderr();
  return exit_;
}

ChildExit ChildProcess::kill_and_reap() {
  if (!running()) return exit_;
  kill(pid_, SIGKILL);
  reap(true);
  drain_stderr();
  return exit_;
}

ChildExit wait_for_child(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error("cannot wait for process " + std::to_string(child) + ": " +
                               std::strerror(errno));
    }
  }
  return exit_of(status);
}

ChildExit run_program(const std::vector<std::string>& arguments, const ProgramFiles& files) {
  if (arguments.empty()) throw std::invalid_argument("run_program needs a program");
  const int mode = O_WRONLY | O_CREAT | (files.append ? O_APPEND : O_TRUNC);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, files.stdout_file.c_str(), mode, 0644);
  if (files.stderr_file) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, files.stderr_file->c_str(), mode,
                                     0644);
  } else {
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  if (files.working_directory) {
    posix_spawn_file_actions_addchdir_np(&actions, files.working_directory->c_str());
  }

  std::vector<std::string> argument_text = arguments;
  std::vector<char*> argv;
  for (std::string& argument : argument_text) argv.push_back(argument.data());
  argv.push_back(nullptr);

  SpawnEnvironment environment(files.environment);
  pid_t child = 0;
  const int spawn_error =
      posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environment.pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    throw std::runtime_error("cannot start " + arguments[0] + ": " + std::strerror(spawn_error));
  }
  return wait_for_child(child);
}

pid_t run_in_child(const std::function<int()>& body) {
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (child > 0) return child;
  int code = 3;
  try {
    code = body();
  } catch (...) {
  }
  _exit(code);
}

}  // namespace swr
