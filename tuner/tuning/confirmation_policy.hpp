// Which variants a tuning run times again before it settles a shape's best (`--confirm-rounds R`).
// The leaders of a shape sit within a few percent of each other, and one timing of a variant moved
// by up to 8% either way between runs minutes apart on a quiet H100
// (bench/results/attention-backward-ws-h200/l2-replay-2026-11-26/tune-repeat-h100.txt): a single
// lucky run picked a different backward at 9 of 15 shapes between two tunes. So after the sweep
// the leaders (the valid variants within kLeaderWindow of the shape's best time, at most
// kMostLeaders) are timed again, R rounds of each leader in turn, the order rotated every round;
// each run is a new measurement row, and the database's rule for a build's time (the lower median
// of its runs: ResultsDatabase::config_times) makes the middle run count. A leader needs 1 + R
// runs of its build in all, so a stopped run resumes with the runs still missing, and a variant
// that the re-timing brings into the window is confirmed in a further pass.
#pragma once

#include <string>
#include <vector>

#include "db/records.hpp"

namespace swr {

// Rounds after the sweep when --confirm-rounds is not given: with the sweep's run, three runs,
// whose middle one counts.
inline constexpr int kDefaultConfirmRounds = 2;
inline constexpr int kMostConfirmRounds = 10;
// A leader is within 5% of the best: wider than the leaders' spread (1-3%) and than most of one
// timing's spread (10th-90th percentile 0.97-1.05 between two H100 tunes).
inline constexpr double kLeaderWindow = 1.05;
inline constexpr int kMostLeaders = 4;
// Passes of confirmation at most: the re-timing may bring another variant into the window.
inline constexpr int kConfirmationPasses = 3;

struct ConfirmationRuns {
  std::string config_key;
  int runs = 0;  // runs still missing
};

// The leaders of one shape among `times` (its configs' times by the database's rule, only those
// the run may measure) that lack some of their 1 + `rounds` runs, fastest first.
std::vector<ConfirmationRuns> leaders_to_confirm(std::vector<db::ConfigTime> times, int rounds);

// Round r (from 0) of one shape's leaders: those still missing more than r runs, in the order
// rotated r places, so that no leader always runs first.
std::vector<std::string> confirmation_round(const std::vector<ConfirmationRuns>& leaders, int r);

// "bad --confirm-rounds 'X': allowed 0 (no re-timing) to 10 rounds": the one line of a bad value.
std::string bad_confirm_rounds_message(const std::string& text);

}  // namespace swr
