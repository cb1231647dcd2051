// Rules every option value of swr-tune follows, whichever the command: an option given with an
// empty value (`--limit ''`, `--cache-dir ''`) is bad input, never taken as "not given".
#pragma once

#include <CLI/CLI.hpp>

namespace swr::cli {

// Adds to every value-taking option of `app` and its subcommands a check that refuses an empty
// value with one line naming the option and what it takes ("--limit: empty value; allowed N ...").
// CLI11 reports it as a parse error: exit code 2, before any work.
void refuse_empty_option_values(CLI::App& app);

}  // namespace swr::cli
