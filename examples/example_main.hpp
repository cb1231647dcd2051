// The main() both example programs share: --help prints `usage` (exit 0), else the arguments are
// parsed (a UsageError is exit 2), then the run (a UsageError, e.g. a path that is no database or
// export, is exit 2, any other error 1).
#pragma once

#include <cstdio>
#include <exception>
#include <string_view>

#include "swr/usage_error.hpp"

namespace swr_example {

template <class Parse, class Run>
int example_main(const char* program, const char* usage, int argc, char** argv, Parse parse,
                 Run run) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      std::printf("usage: %s %s", program, usage);
      return 0;
    }
  }
  try {
    return run(parse(argc, argv));
  } catch (const swr::UsageError& error) {
    std::fprintf(stderr, "%s: error: %s\n", program, error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: error: %s\n", program, error.what());
    return 1;
  }
}

}  // namespace swr_example
