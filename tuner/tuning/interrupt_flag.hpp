// Ctrl-C during a tuning run: the first SIGINT/SIGTERM asks the run to stop after the variant in
// flight (it is finished and committed), a second one drops that variant too. Tests raise the flag
// directly instead of sending signals.
#pragma once

#include <atomic>

namespace swr {

class InterruptFlag {
 public:
  void raise() { requests_.fetch_add(1); }
  // The run should start nothing new.
  bool stop_requested() const { return requests_.load() >= 1; }
  // The user insisted: abandon the variant in flight as well.
  bool drop_requested() const { return requests_.load() >= 2; }

 private:
  std::atomic<int> requests_{0};
  static_assert(std::atomic<int>::is_always_lock_free, "raised from a signal handler");
};

// Routes SIGINT and SIGTERM to a flag while in scope (the previous handlers come back after).
// The handler also writes one line to stderr saying what happens next.
class ScopedInterruptHandler {
 public:
  explicit ScopedInterruptHandler(InterruptFlag& flag);
  ~ScopedInterruptHandler();
  ScopedInterruptHandler(const ScopedInterruptHandler&) = delete;
  ScopedInterruptHandler& operator=(const ScopedInterruptHandler&) = delete;
};

}  // namespace swr
