#include "support/interrupt_notice.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

namespace swr {
namespace {

// The handler may only read memory prepared before: a fixed buffer, published by an atomic flag.
std::array<char, 1024> notice_text{};
std::atomic<std::size_t> notice_length{0};
struct sigaction previous_interrupt {};
struct sigaction previous_terminate {};

void print_notice_and_exit(int) {
  const std::size_t length = notice_length.load();
  std::size_t written = 0;
  while (written < length) {
    const ssize_t n = ::write(STDERR_FILENO, notice_text.data() + written, length - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  ::_exit(130);
}

}  // namespace

InterruptNotice::InterruptNotice(const std::string& notice) {
  const std::string line = "swr-tune: interrupted: " + notice + "\n";
  const std::size_t length = std::min(line.size(), notice_text.size());
  notice_length.store(0);
  std::memcpy(notice_text.data(), line.data(), length);
  if (length == notice_text.size()) notice_text.back() = '\n';
  notice_length.store(length);
  struct sigaction action {};
  action.sa_handler = print_notice_and_exit;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_interrupt);
  sigaction(SIGTERM, &action, &previous_terminate);
}

InterruptNotice::~InterruptNotice() {
  sigaction(SIGINT, &previous_interrupt, nullptr);
  sigaction(SIGTERM, &previous_terminate, nullptr);
}

}  // namespace swr
