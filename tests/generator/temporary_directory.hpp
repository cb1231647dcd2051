// The tests' temporary directories are the library's own (support/temporary_directory.hpp).
#pragma once

#include "support/temporary_directory.hpp"

namespace swr::testing {

using swr::TemporaryDirectory;

}  // namespace swr::testing
