// The command line and main() both example programs share: the options every example takes
// (--db/--export, --gpu, --dtype, --require-gpu), each example's shape options handed to it, and
// main(): --help prints `usage` (exit 0), else the arguments are parsed (a UsageError is exit 2),
// then the run (a UsageError, e.g. a path that is no database or export, is exit 2, any other
// error 1).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "swr/data_type.hpp"
#include "swr/usage_error.hpp"

namespace swr_example {

struct CommonArguments {
  std::string catalog;  // --db PATH or --export DIR
  std::string gpu;
  swr::DataType dtype = swr::DataType::f16;
  bool require_gpu = false;  // exit 1 rather than 0 when no GPU can launch
};

inline int positive_int(const std::string& option, const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 1 || value > (1L << 30)) {
    throw swr::UsageError("bad " + option + " '" + text + "': allowed a positive integer");
  }
  return static_cast<int>(value);
}

// Walks argv: the common options fill `common`; every other option goes to
// shape_option(option, value) (value() takes the option's argument), which returns false for an
// option it does not know.
template <class ShapeOption>
void parse_arguments(int argc, char** argv, CommonArguments& common, ShapeOption shape_option) {
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw swr::UsageError("missing value after " + option);
      return argv[++i];
    };
    if (option == "--db" || option == "--export") {
      common.catalog = value();
    } else if (option == "--gpu") {
      common.gpu = value();
    } else if (option == "--dtype") {
      const std::string dtype = value();
      if (dtype != "f16" && dtype != "bf16") {
        throw swr::UsageError("bad --dtype '" + dtype + "': allowed f16, bf16");
      }
      common.dtype = dtype == "f16" ? swr::DataType::f16 : swr::DataType::bf16;
    } else if (option == "--require-gpu") {
      common.require_gpu = true;
    } else if (!shape_option(option, value)) {
      throw swr::UsageError("unknown option '" + option + "'");
    }
  }
  if (common.catalog.empty()) throw swr::UsageError("missing --db PATH or --export DIR");
}

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
