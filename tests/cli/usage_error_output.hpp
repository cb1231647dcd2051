// What every refusal of bad input looks like to a user: exit code 2, nothing on stdout, and one
// line on stderr, "swr-tune: error: ...", that says what was wrong.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "run_swr_tune.hpp"

namespace swr::test {

// Call through ASSERT_NO_FATAL_FAILURE where what follows needs the one line.
inline void expect_one_line_usage_error(const ProcessResult& result,
                                        const std::vector<std::string>& said) {
  EXPECT_EQ(result.exit_code, 2) << result.err;
  const std::vector<std::string> lines = lines_of(result.err);
  ASSERT_EQ(lines.size(), 1u) << "stderr: " << result.err;
  EXPECT_EQ(lines[0].rfind("swr-tune: error: ", 0), 0u) << lines[0];
  for (const std::string& part : said) {
    EXPECT_NE(lines[0].find(part), std::string::npos) << lines[0];
  }
  EXPECT_EQ(result.out, "");
}

}  // namespace swr::test
