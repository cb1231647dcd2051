// The tests' temporary directories are the library's own (support/files.hpp).
#pragma once

#include "support/files.hpp"

namespace swr::testing {

using swr::TemporaryDirectory;

}  // namespace swr::testing
