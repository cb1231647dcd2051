#include "report/gnuplot_runner.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/child_process.hpp"

namespace swr::report {
namespace {

std::string last_error_line(const std::filesystem::path& log, std::streamoff from) {
  std::ifstream in(log);
  in.seekg(from);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t^") != std::string::npos) last = line;
  }
  return last;
}

}  // namespace

std::optional<std::filesystem::path> find_gnuplot() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream directories(path);
  for (std::string directory; std::getline(directories, directory, ':');) {
    if (directory.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(directory) / "gnuplot";
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

RenderResult run_gnuplot(const std::filesystem::path& gnuplot,
                         const std::filesystem::path& directory, const std::string& script,
                         const std::string& png) {
  const std::filesystem::path log = directory / "gnuplot.log";
  std::error_code ignored;
  const std::streamoff log_start =
      std::filesystem::exists(log) ? std::filesystem::file_size(log, ignored) : 0;
  std::filesystem::remove(directory / png, ignored);  // a stale image must not pass for a new one

  ChildExit exit;
  try {
    ProgramFiles files;
    files.stdout_file = log;
    files.append = true;
    files.working_directory = directory;
    exit = run_program({gnuplot.string(), script}, files);
  } catch (const std::runtime_error&) {
    return {false, "cannot start " + gnuplot.string()};
  }
  const bool exited_ok = !exit.signaled && exit.code == 0;
  const std::filesystem::path image = directory / png;
  if (exited_ok && std::filesystem::exists(image, ignored) &&
      std::filesystem::file_size(image, ignored) > 0) {
    return {true, ""};
  }
  const std::string said = last_error_line(log, log_start);
  return {false, "gnuplot " + script + " made no " + png +
                     (said.empty() ? "" : " (gnuplot said: " + said + ")") + ", see " +
                     log.string()};
}

}  // namespace swr::report
