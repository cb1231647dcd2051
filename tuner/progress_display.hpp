// Progress of a long batch of work: on a terminal, one status line (count, bar, ETA) redrawn in
// place under the result lines; otherwise plain log lines, so that CI logs stay readable.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

namespace swr {

class ProgressDisplay {
 public:
  // `what` names the work in the status line, e.g. "compiling". With `quiet`, result lines are
  // dropped (the caller prints JSON at the end) but the terminal status line still shows.
  ProgressDisplay(std::string what, int total, bool quiet);
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  // Prints one result line (may span lines) and counts one item as done.
  void item_done(const std::string& result_line);
  // Shown after the ETA in the status line and the progress log lines (e.g. the counters' share).
  void set_detail(std::string detail) { detail_ = std::move(detail); }
  // More work than the display was made for (a second pass of a run).
  void add_to_total(int more) { total_ += more; }
  // Erases the status line; later output starts on a clean line.
  void finish();

  int done() const { return done_; }
  double elapsed_seconds() const;
  // "[ 3/96]" for the item about to be reported (done() + 1), to prefix its result line.
  std::string next_counter() const;

 private:
  std::string counter(int done) const;
  void draw_status_line();
  void log_progress();

  std::string what_;
  std::string detail_;
  int total_;
  bool quiet_;
  bool interactive_;  // stdout and stderr are terminals
  int done_ = 0;
  int next_log_percent_ = 10;
  bool status_shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace swr
