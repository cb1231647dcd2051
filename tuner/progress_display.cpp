#include "tuner/progress_display.hpp"

#include <unistd.h>

#include <cstdio>

#include "tuner/text_format.hpp"

namespace swr {

ProgressDisplay::ProgressDisplay(std::string what, int total, bool quiet)
    : what_(std::move(what)),
      total_(total),
      quiet_(quiet),
      interactive_(isatty(STDOUT_FILENO) && isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()) {
  if (interactive_) draw_status_line();
}

ProgressDisplay::~ProgressDisplay() {
  finish();
}

double ProgressDisplay::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string ProgressDisplay::next_counter() const {
  return counter(done_ + 1);
}

std::string ProgressDisplay::counter(int done_count) const {
  const std::string total = std::to_string(total_);
  std::string done = std::to_string(done_count);
  if (done.size() < total.size()) done.insert(0, total.size() - done.size(), ' ');
  return "[" + done + "/" + total + "]";
}

void ProgressDisplay::item_done(const std::string& result_line) {
  ++done_;
  if (interactive_ && status_shown_) {
    std::fputs("\r\033[K", stderr);  // erase the status line before the result goes above it
    std::fflush(stderr);
    status_shown_ = false;
  }
  if (!quiet_) {
    std::fputs(result_line.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  if (interactive_) {
    draw_status_line();
  } else {
    log_progress();
  }
}

void ProgressDisplay::finish() {
  if (interactive_ && status_shown_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    status_shown_ = false;
  }
}

void ProgressDisplay::draw_status_line() {
  constexpr int kBarWidth = 30;
  const int filled = total_ > 0 ? done_ * kBarWidth / total_ : kBarWidth;
  std::string line = what_ + " " + counter(done_) + " [" + std::string(filled, '#') +
                     std::string(kBarWidth - filled, '.') + "] " +
                     format_duration(elapsed_seconds());
  if (done_ > 0 && done_ < total_) {
    line += ", ETA " + format_duration(elapsed_seconds() / done_ * (total_ - done_));
  }
  if (!detail_.empty()) line += " (" + detail_ + ")";
  std::fputs(("\r\033[K" + line).c_str(), stderr);
  std::fflush(stderr);
  status_shown_ = true;
}

// Every tenth of the work, one line on stderr: enough to see a run is alive without a terminal.
void ProgressDisplay::log_progress() {
  if (total_ < 20 || done_ >= total_) return;
  const int percent = done_ * 100 / total_;
  if (percent < next_log_percent_) return;
  next_log_percent_ = (percent / 10 + 1) * 10;
  const double elapsed = elapsed_seconds();
  std::fprintf(stderr, "%s: %d of %d done (%d%%), %s elapsed, ETA %s%s\n", what_.c_str(), done_,
               total_, percent, format_duration(elapsed).c_str(),
               format_duration(elapsed / done_ * (total_ - done_)).c_str(),
               detail_.empty() ? "" : (" (" + detail_ + ")").c_str());
  std::fflush(stderr);
}

}  // namespace swr
