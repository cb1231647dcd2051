// Runs the real swr-tune binary as a child process, with stdout and stderr captured separately
// and extra environment variables, for tests of the command line as a user sees it.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/files.hpp"

namespace swr::test {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

// The binary under test: $SWR_TUNE_PATH when set (to test a copy elsewhere), else the one built.
std::string swr_tune_path();

// Runs swr_tune_path() with `arguments`; `environment` entries are added to (or replace) this
// process's environment. Standard input is /dev/null.
ProcessResult run_swr_tune(const std::vector<std::string>& arguments,
                           const std::map<std::string, std::string>& environment = {});

using swr::TemporaryDirectory;

// Lines of a text, without their '\n'.
std::vector<std::string> lines_of(const std::string& text);

}  // namespace swr::test
