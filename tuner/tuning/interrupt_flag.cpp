#include "tuner/tuning/interrupt_flag.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace swr {
namespace {

std::atomic<InterruptFlag*> g_flag{nullptr};
struct sigaction g_previous_interrupt;
struct sigaction g_previous_terminate;

void write_message(const char* text) {
  // write(2) is async-signal-safe; a short write to a terminal is harmless here.
  [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, text, std::strlen(text));
}

void on_interrupt(int) {
  InterruptFlag* flag = g_flag.load();
  if (flag == nullptr) return;
  const bool first = !flag->stop_requested();
  flag->raise();
  write_message(first ? "\nswr-tune: stopping after the variant in flight (Ctrl-C again to drop "
                        "it)\n"
                      : "\nswr-tune: dropping the variant in flight\n");
}

}  // namespace

ScopedInterruptHandler::ScopedInterruptHandler(InterruptFlag& flag) {
  InterruptFlag* expected = nullptr;
  if (!g_flag.compare_exchange_strong(expected, &flag)) {
    throw std::logic_error("only one interrupt handler may be installed at a time");
  }
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocking poll returns EINTR and sees the flag at once
  sigaction(SIGINT, &action, &g_previous_interrupt);
  sigaction(SIGTERM, &action, &g_previous_terminate);
}

ScopedInterruptHandler::~ScopedInterruptHandler() {
  sigaction(SIGINT, &g_previous_interrupt, nullptr);
  sigaction(SIGTERM, &g_previous_terminate, nullptr);
  g_flag.store(nullptr);
}

}  // namespace swr
