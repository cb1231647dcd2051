// How tests order the fake measurement worker (fake_measure_worker.cpp) around: the request's seed
// says what to do with it, since the seed is a number the real worker only uses for its inputs.
#pragma once

#include <cstdint>

namespace swr::testing {

enum class FakeWorkerOrder : std::uint64_t {
  measure = 0,       // reply with a plausible ok result
  crash = 1,         // write a line to stderr, then SIGSEGV
  exit = 2,          // write a line to stderr, then exit with code 7 without replying
  hang = 3,          // never reply
  lose_context = 4,  // reply "fault" with context_lost, then exit like the real worker
  garbage = 5,       // reply with a line that is not JSON
  // In a batch (measure_batch): measured fine, then SIGSEGV while the batch is counted (alone,
  // counted one session each, it crashes while measured, naming itself).
  crash_counting = 6,
};

inline std::uint64_t seed_for(FakeWorkerOrder order) {
  return 1000 + static_cast<std::uint64_t>(order);
}
inline FakeWorkerOrder order_of(std::uint64_t seed) {
  return static_cast<FakeWorkerOrder>((seed - 1000) % 1000);
}

}  // namespace swr::testing
