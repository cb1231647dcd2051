#include "run_swr_tune.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/child_process.hpp"

namespace swr::test {

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string swr_tune_path() {
  const char* overridden = std::getenv("SWR_TUNE_PATH");
  return overridden != nullptr && *overridden != '\0' ? overridden : SWR_TUNE_PATH;
}

ProcessResult run_swr_tune(const std::vector<std::string>& arguments,
                           const std::map<std::string, std::string>& environment) {
  TemporaryDirectory capture;
  const std::string out_path = (capture.path() / "stdout").string();
  const std::string err_path = (capture.path() / "stderr").string();

  const std::string program = swr_tune_path();
  std::vector<std::string> argument_text = {program};
  argument_text.insert(argument_text.end(), arguments.begin(), arguments.end());
  ProgramFiles files;
  files.stdout_file = out_path;
  files.stderr_file = err_path;
  files.environment = environment;
  const ChildExit exit = run_program(argument_text, files);

  ProcessResult result;
  result.exit_code = exit.signaled ? 128 + exit.code : exit.code;
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace swr::test
