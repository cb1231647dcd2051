#include "tuner/tuning/counters_policy.hpp"

#include <algorithm>
#include <map>

#include "tuner/tuning/result_table.hpp"
#include "tuner/tuning/walk_order_twins.hpp"

namespace swr {

std::string_view to_string(CountersPolicy policy) {
  switch (policy) {
    case CountersPolicy::all:
      return "all";
    case CountersPolicy::top:
      return "top";
    case CountersPolicy::none:
      return "none";
  }
  return "all";
}

std::optional<CountersPolicy> parse_counters_policy(std::string_view text) {
  for (CountersPolicy policy : {CountersPolicy::all, CountersPolicy::top, CountersPolicy::none}) {
    if (text == to_string(policy)) return policy;
  }
  return std::nullopt;
}

std::string bad_counters_policy_message(std::string_view text) {
  return "bad --counters '" + std::string(text) +
         "': allowed all (every variant), top (the fastest and their walk-order twins) or none "
         "(timing only)";
}

std::vector<std::string> configs_needing_counters(const std::vector<db::StoredMeasurement>& current,
                                                  int top) {
  std::vector<const db::StoredMeasurement*> valid;
  std::map<std::string, const db::StoredMeasurement*> by_key;
  for (const db::StoredMeasurement& measurement : current) {
    if (!is_valid_measurement(measurement)) continue;
    valid.push_back(&measurement);
    by_key[measurement.config_key] = &measurement;
  }
  std::stable_sort(valid.begin(), valid.end(), [](const auto* a, const auto* b) {
    if (*a->record.median_ms != *b->record.median_ms) {
      return *a->record.median_ms < *b->record.median_ms;
    }
    return a->config_key < b->config_key;
  });
  std::vector<std::string> selected;
  std::set<std::string> seen;
  const auto take = [&](const db::StoredMeasurement& measurement) {
    if (!seen.insert(measurement.config_key).second) return;
    const db::CounterStatus status =
        measurement.record.counter_status.value_or(db::derived_counter_status(measurement.record));
    if (status != db::CounterStatus::collected) selected.push_back(measurement.config_key);
  };
  const std::size_t count = std::min(valid.size(), static_cast<std::size_t>(std::max(top, 0)));
  for (std::size_t i = 0; i < count; ++i) {
    take(*valid[i]);
    if (const std::optional<std::string> twin = walk_order_twin(valid[i]->config_key)) {
      const auto found = by_key.find(*twin);
      if (found != by_key.end()) take(*found->second);
    }
  }
  return selected;
}

std::string skipped_counters_note(CountersPolicy policy, int top) {
  if (policy == CountersPolicy::none) return "--counters none: timing only";
  return "--counters top: timing pass; the " + std::to_string(top) +
         " fastest and their walk-order twins are measured again with counters";
}

}  // namespace swr
