#include "tuner/tuning/variant_batches.hpp"

#include <cstdlib>
#include <numeric>
#include <string>

#include "swr/usage_error.hpp"

namespace swr {

std::vector<VariantOutcome> measure_isolating_faults(std::size_t count,
                                                     const BatchRequest& request) {
  std::vector<VariantOutcome> outcomes(count);
  std::vector<std::size_t> remaining(count);
  std::iota(remaining.begin(), remaining.end(), std::size_t{0});
  bool one_session_each = false;
  while (!remaining.empty()) {
    BatchAttempt attempt = request(remaining, one_session_each);
    if (attempt.complete && attempt.outcomes.size() == remaining.size()) {
      for (std::size_t i = 0; i < remaining.size(); ++i) {
        outcomes[remaining[i]] = std::move(attempt.outcomes[i]);
      }
      break;
    }
    if (attempt.death.dropped) {
      for (std::size_t position : remaining) outcomes[position] = attempt.death;
      break;
    }
    if (attempt.culprit && *attempt.culprit < remaining.size()) {
      outcomes[remaining[*attempt.culprit]] = std::move(attempt.death);
      remaining.erase(remaining.begin() + static_cast<std::ptrdiff_t>(*attempt.culprit));
      continue;
    }
    if (one_session_each) {
      // Even one at a time the worker died naming no variant: the first is taken as the culprit,
      // so that the run always moves on.
      outcomes[remaining.front()] = std::move(attempt.death);
      remaining.erase(remaining.begin());
      continue;
    }
    one_session_each = true;
  }
  return outcomes;
}

std::size_t counter_batch_from_environment() {
  const char* text = std::getenv("SWR_COUNTER_BATCH");
  if (text == nullptr || *text == '\0') return kVariantsPerCounterBatch;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 1 || value > static_cast<long>(kVariantsPerCounterBatch)) {
    throw UsageError("SWR_COUNTER_BATCH='" + std::string(text) + "': allowed 1 to " +
                     std::to_string(kVariantsPerCounterBatch));
  }
  return static_cast<std::size_t>(value);
}

}  // namespace swr
