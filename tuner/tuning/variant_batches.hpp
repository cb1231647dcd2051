// Measuring several variants in one worker request, so that one profiling session counts them all
// (counter_batches.hpp), without letting one faulty variant cost the others: the worker process
// stays the isolation. When a variant kills the worker (a fault, a hang), its outcome says so and
// the rest of the batch is measured again in a fresh worker without it; when the worker dies while
// counting the batch (no culprit known), the rest is measured again with one profiling session per
// variant, each counted right after its timing, so that the next death names its variant.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

// How many variants a device takes per request when their counters are collected in batches.
inline constexpr std::size_t kVariantsPerCounterBatch = 32;

// The batch a worker takes: $SWR_COUNTER_BATCH (1..kVariantsPerCounterBatch), default
// kVariantsPerCounterBatch; 1: one variant a request, counted right after its timing (the path
// before batches). On the H200 batched counters differ from one session per variant no more than
// one session per variant differs from itself on a second run (docs/tuning-at-scale.md, "L2
// counters in batches"). UsageError for another value.
std::size_t counter_batch_from_environment();

// What one worker request over some of a batch's variants gave.
struct BatchAttempt {
  // Every variant's outcome, in the order asked, when the request completed.
  std::vector<VariantOutcome> outcomes;
  bool complete = false;
  // Otherwise: the position (in the order asked) of the variant the worker died with, when known,
  // and the outcome that says how it died (also when the culprit is unknown, e.g. dropped).
  std::optional<std::size_t> culprit;
  VariantOutcome death;
};

// `positions`: indexes of the batch's variants to measure, in order; `one_session_each`: count
// each right after its timing, in its own profiling session.
using BatchRequest =
    std::function<BatchAttempt(const std::vector<std::size_t>& positions, bool one_session_each)>;

// Outcomes of variants 0..count-1 through `request`, by the rule above. A dropped death (a second
// Ctrl-C) drops every variant not yet measured.
std::vector<VariantOutcome> measure_isolating_faults(std::size_t count,
                                                     const BatchRequest& request);

}  // namespace swr
