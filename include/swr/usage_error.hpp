// Bad input from a user: reported as one line, exit code 2, nothing written.
#pragma once

#include <stdexcept>
#include <string>
#include "swr/export.h"

namespace swr {

class SWR_API UsageError : public std::invalid_argument {
 public:
  explicit UsageError(const std::string& message) : std::invalid_argument(message) {}
};

}  // namespace swr
