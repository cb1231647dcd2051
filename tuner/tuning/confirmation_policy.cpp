#include "tuner/tuning/confirmation_policy.hpp"

#include <algorithm>

namespace swr {

std::vector<ConfirmationRuns> leaders_to_confirm(std::vector<db::ConfigTime> times, int rounds) {
  std::vector<ConfirmationRuns> missing;
  if (rounds <= 0 || times.empty()) return missing;
  std::sort(times.begin(), times.end(), [](const db::ConfigTime& a, const db::ConfigTime& b) {
    return a.median_ms != b.median_ms ? a.median_ms < b.median_ms : a.config_key < b.config_key;
  });
  const double window_ms = times.front().median_ms * kLeaderWindow;
  const std::size_t leaders = std::min(times.size(), static_cast<std::size_t>(kMostLeaders));
  for (std::size_t i = 0; i < leaders && times[i].median_ms <= window_ms; ++i) {
    const int runs = 1 + rounds - times[i].build_runs;
    if (runs > 0) missing.push_back({times[i].config_key, runs});
  }
  return missing;
}

std::vector<std::string> confirmation_round(const std::vector<ConfirmationRuns>& leaders, int r) {
  std::vector<std::string> round;
  const std::size_t count = leaders.size();
  for (std::size_t i = 0; i < count; ++i) {
    const ConfirmationRuns& leader = leaders[(i + static_cast<std::size_t>(r)) % count];
    if (leader.runs > r) round.push_back(leader.config_key);
  }
  return round;
}

std::string bad_confirm_rounds_message(const std::string& text) {
  return "bad --confirm-rounds '" + text + "': allowed 0 (no re-timing) to " +
         std::to_string(kMostConfirmRounds) + " rounds";
}

}  // namespace swr
