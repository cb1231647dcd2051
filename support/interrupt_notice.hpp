// What Ctrl-C (SIGINT) or SIGTERM says while a long command runs: one line on stderr that tells
// what is kept and how to resume, then exit code 130. Safe wherever every write is atomic (the
// cubin cache renames finished files into place, the results database commits whole sets): the
// process stops at once and a stop leaves nothing half-written to clean up. (A tuning run on the
// GPU instead finishes the variant in flight: tuner/tuning/interrupt_flag.hpp.)
#pragma once

#include <string>

namespace swr {

class InterruptNotice {
 public:
  // From construction to destruction, SIGINT and SIGTERM print "<program>: interrupted: <notice>"
  // and exit with 130. One at a time (a second one replaces the first's text).
  explicit InterruptNotice(const std::string& notice);
  ~InterruptNotice();
  InterruptNotice(const InterruptNotice&) = delete;
  InterruptNotice& operator=(const InterruptNotice&) = delete;
};

}  // namespace swr
